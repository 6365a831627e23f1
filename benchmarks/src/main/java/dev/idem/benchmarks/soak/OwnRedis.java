package dev.idem.benchmarks.soak;

import dev.idem.testkit.internal.Ports;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * A redis-server of the soak's own on a free port (the shared Redis on 6379 is never touched),
 * keeping nothing on disk. Its fault: killed with SIGKILL and started again empty 0.2 to 3 s later,
 * as a failover that lost every write. Not thread-safe: the chaos loop alone drives it.
 */
final class OwnRedis implements SoakRedis {

    private static final long WAIT_MILLIS = 10_000;
    private static final int MIN_DOWN_MILLIS = 200;
    private static final int MAX_DOWN_MILLIS = 3_000;

    private final int port = Ports.free();
    private final Path dir;
    private final List<Loss> losses = new ArrayList<>();
    private Process process;
    private long upAt;
    private int restarts;

    OwnRedis(Path dir) {
        this.dir = dir;
    }

    @Override
    public String url() {
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

    @Override
    public String fault(Random random) throws InterruptedException {
        if (upAt != 0) {
            return "Redis already down";
        }
        process.destroyForcibly().waitFor();
        await(false);
        Instant at = Instant.now();
        losses.add(new Loss(at, at, null));
        int down = MIN_DOWN_MILLIS + random.nextInt(MAX_DOWN_MILLIS - MIN_DOWN_MILLIS);
        upAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(down);
        restarts++;
        return String.format("kill -9 redis-server (data lost); start it again in %d ms", down);
    }

    @Override
    public String heal() throws IOException, InterruptedException {
        if (upAt == 0 || System.nanoTime() < upAt) {
            return null;
        }
        up();
        upAt = 0;
        return "redis-server started again, empty";
    }

    @Override
    public boolean underWay() {
        return upAt != 0;
    }

    @Override
    public int faults() {
        return restarts;
    }

    @Override
    public String faultName() {
        return "Redis restarts (data lost)";
    }

    @Override
    public List<Loss> losses() {
        return List.copyOf(losses);
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
            process.destroyForcibly().waitFor();
        }
    }
}
