package dev.idem.benchmarks.soak;

import dev.idem.testkit.internal.Ports;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A redis-server of the soak's own on a free port (the shared Redis on 6379 is never touched),
 * keeping nothing on disk: killed and started again, it comes back empty, as a failover that lost
 * its writes. Not thread-safe: the chaos loop alone drives it.
 */
final class OwnRedis implements AutoCloseable {

    private static final long WAIT_MILLIS = 10_000;

    private final int port = Ports.free();
    private final Path dir;
    private Process process;

    OwnRedis(Path dir) {
        this.dir = dir;
    }

    String uri() {
        return "redis://127.0.0.1:" + port;
    }

    /** Starts the server and waits until it listens. */
    void up() throws IOException, InterruptedException {
        process = new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--maxmemory-policy", "noeviction", "--dir", dir.toString())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("redis.log").toFile()))
                .start();
        await(true);
    }

    /** SIGKILL: whatever the server held is gone. Waits until the port is closed. */
    void kill() throws InterruptedException {
        process.destroyForcibly().waitFor();
        await(false);
    }

    private void await(boolean listening) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MILLIS);
        while (listening() != listening) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("redis-server on port " + port + (listening ? " did not start" : " did not stop"));
            }
            TimeUnit.MILLISECONDS.sleep(20);
        }
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
            kill();
        }
    }
}
