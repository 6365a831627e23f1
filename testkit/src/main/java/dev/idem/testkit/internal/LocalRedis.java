package dev.idem.testkit.internal;

import dev.idem.testkit.RedisEndpoint;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.embedded.RedisServer;

/** Redis from {@code REDIS_URL}, else a Redis answering on 127.0.0.1:6379, else an embedded redis-server. */
final class LocalRedis {

    private static final Logger LOG = LoggerFactory.getLogger(LocalRedis.class);
    private static final int DEFAULT_PORT = 6379;
    private static final int PROBE_TIMEOUT_MILLIS = 500;

    private LocalRedis() {
    }

    static Started find(Path workDir) {
        String url = System.getenv("REDIS_URL");
        if (url != null && !url.isBlank()) {
            LOG.info("Redis from REDIS_URL");
            return Started.unmanaged(new RedisEndpoint(URI.create(url.trim())));
        }
        if (pings("127.0.0.1", DEFAULT_PORT)) {
            LOG.info("Redis answering on 127.0.0.1:{}", DEFAULT_PORT);
            return Started.unmanaged(RedisEndpoint.of("127.0.0.1", DEFAULT_PORT));
        }
        return embedded(workDir);
    }

    private static Started embedded(Path workDir) {
        int port = Ports.free();
        try {
            Path dir = Files.createDirectories(workDir.resolve("redis"));
            // No persistence: test data is thrown away with the process.
            RedisServer server = RedisServer.newRedisServer()
                    .bind("127.0.0.1")
                    .port(port)
                    .setting("save \"\"")
                    .setting("appendonly no")
                    .setting("dir " + dir)
                    .setting("maxmemory-policy noeviction")
                    .build();
            server.start();
            LOG.info("No Redis answered on 127.0.0.1:{}; started an embedded redis-server on port {}",
                    DEFAULT_PORT, port);
            return new Started(RedisEndpoint.of("127.0.0.1", port), server::stop);
        } catch (IOException e) {
            throw new IllegalStateException("no Redis on REDIS_URL or 127.0.0.1:" + DEFAULT_PORT
                    + ", and the embedded redis-server did not start (its Linux build needs OpenSSL 3)", e);
        }
    }

    private static boolean pings(String host, int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), PROBE_TIMEOUT_MILLIS);
            socket.setSoTimeout(PROBE_TIMEOUT_MILLIS);
            OutputStream out = socket.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            byte[] reply = new byte[5];
            int read = in.readNBytes(reply, 0, reply.length);
            return read == reply.length && new String(reply, StandardCharsets.US_ASCII).equals("+PONG");
        } catch (IOException e) {
            return false;
        }
    }
}
