package dev.idem.redis;

import static org.awaitility.Awaitility.await;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * A redis-server of this test's own, on a free port, to stop and start again for an outage (the
 * shared Redis on 6379 must never be stopped). Nothing is kept on disk: a restart comes back empty.
 */
public final class OwnRedisServer implements AutoCloseable {

    private final int port;
    private Process process;

    private OwnRedisServer(int port) {
        this.port = port;
    }

    public static OwnRedisServer start() throws IOException {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        OwnRedisServer server = new OwnRedisServer(port);
        server.up();
        return server;
    }

    public int port() {
        return port;
    }

    public void up() throws IOException {
        process = new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--maxmemory-policy", "noeviction")
                .redirectErrorStream(true).redirectOutput(new File(System.getProperty("java.io.tmpdir"),
                        "redis-" + port + ".log")).start();
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(this::listening);
    }

    public void down() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
        }
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> !listening());
    }

    /** A client that gives up on a command within about two seconds while the server is down. */
    public RedissonClient client() {
        Config config = new Config();
        config.useSingleServer().setAddress("redis://127.0.0.1:" + port)
                .setConnectTimeout(1_000).setTimeout(1_000).setRetryAttempts(1).setRetryInterval(200);
        return Redisson.create(config);
    }

    private boolean listening() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    @Override
    public void close() throws InterruptedException {
        if (process != null && process.isAlive()) {
            down();
        }
    }
}
