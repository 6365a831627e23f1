package dev.idem.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A TCP proxy in front of Redis that delays every chunk by a fixed time each way, so a run sees Redis
 * as across a network (no kernel netem on these machines). Delay, not a rate limit: each direction
 * reads as fast as it can and a writer thread sends each chunk once its time has come, so bytes in
 * flight are not held back by the ones before them beyond their own delay. Measured on an idle machine
 * of two cores, a PING's round trip through it takes 0.57 ms at 0.25 ms each way (0.02 ms direct).
 * Its threads' CPU counts in the JVM's.
 */
final class DelayProxy implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(DelayProxy.class);
    private static final byte[] END = new byte[0];
    private static final long SPIN_NANOS = 80_000;

    private record Chunk(long dueNanos, byte[] bytes) {
    }

    private final ServerSocket server;
    private final InetSocketAddress target;
    private final long delayNanos;
    private volatile boolean closed;

    DelayProxy(URI redis, Duration oneWay) throws IOException {
        this.target = new InetSocketAddress(redis.getHost(), redis.getPort());
        this.delayNanos = oneWay.toNanos();
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "delay-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** The address to connect to instead of Redis's. */
    URI uri() {
        return URI.create("redis://127.0.0.1:" + server.getLocalPort());
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket(target.getAddress(), target.getPort());
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                pipe(client, upstream, "up");
                pipe(upstream, client, "down");
            } catch (IOException e) {
                if (!closed) {
                    LOG.warn("delay proxy: a connection failed", e);
                }
            }
        }
    }

    /** Reads {@code from} as it comes and writes each chunk to {@code to} once it has been delayed. */
    private void pipe(Socket from, Socket to, String direction) throws IOException {
        BlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
        InputStream in = from.getInputStream();
        OutputStream out = to.getOutputStream();
        Thread reader = new Thread(() -> {
            byte[] buffer = new byte[64 * 1024];
            try {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    queue.add(new Chunk(System.nanoTime() + delayNanos, Arrays.copyOf(buffer, n)));
                }
            } catch (IOException e) {
                // The connection closed.
            }
            queue.add(new Chunk(0, END));
        }, "delay-proxy-read-" + direction);
        Thread writer = new Thread(() -> {
            try {
                while (true) {
                    Chunk chunk = queue.take();
                    if (chunk.bytes() == END) {
                        break;
                    }
                    long wait;
                    // Parked until shortly before it is due, then spun: a park overshoots by tens of µs.
                    while ((wait = chunk.dueNanos() - System.nanoTime()) > SPIN_NANOS) {
                        LockSupport.parkNanos(wait - SPIN_NANOS);
                    }
                    while (chunk.dueNanos() - System.nanoTime() > 0) {
                        Thread.onSpinWait();
                    }
                    out.write(chunk.bytes());
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // The connection closed.
            } finally {
                close(from);
                close(to);
            }
        }, "delay-proxy-write-" + direction);
        reader.setDaemon(true);
        writer.setDaemon(true);
        reader.start();
        writer.start();
    }

    private static void close(Socket socket) {
        try {
            socket.close();
        } catch (IOException e) {
            // Closing anyway.
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        server.close();
    }
}
