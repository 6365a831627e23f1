package dev.idem.sample.inventory.demo;

import dev.idem.sample.inventory.Application;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The service's instances, each a child JVM on this JVM's class path, configured with system
 * properties and logging to its own file. A kill is {@link Process#destroyForcibly()} (SIGKILL): no
 * shutdown hook, no commit, no release, as in a crash. Not thread-safe: the demo's main thread
 * drives it.
 */
final class Instances implements AutoCloseable {

    private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(20);

    private final Path dir;
    private final Map<String, String> properties;
    private final Map<String, Process> processes = new LinkedHashMap<>();
    private final Map<String, Integer> ports = new LinkedHashMap<>();
    private final Map<String, Integer> incarnations = new LinkedHashMap<>();
    private final Map<String, Path> logs = new LinkedHashMap<>();
    // Each run's logs get names of their own: a second run in the same folder keeps the first's.
    private final String run = Long.toString(System.currentTimeMillis() % 1_000_000_000L, 36);
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    Instances(Path dir, Map<String, String> properties) {
        this.dir = dir;
        this.properties = Map.copyOf(properties);
        Runtime.getRuntime().addShutdownHook(new Thread(this::destroyAll, "demo-instances-stop"));
    }

    /** Starts instance {@code name} (again, after a kill); returns its pid. */
    long start(String name) throws IOException {
        int incarnation = incarnations.merge(name, 1, Integer::sum);
        int port = freePort();
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx256m");
        // Two cores for brokers, Redis, the database and two instances: a small heap, the serial
        // collector and the quick JIT tier leave them to the work.
        command.add("-XX:+UseSerialGC");
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-Duser.home=" + dir);
        command.add("-Djava.io.tmpdir=" + dir);
        command.add("-Drocketmq.client.logUseSlf4j=true");
        command.add("-Dmicronaut.server.port=" + port);
        properties.forEach((key, value) -> command.add("-D" + key + "=" + value));
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(Application.class.getName());
        Path log = dir.resolve("instance-" + name + "-" + incarnation + "-" + run + ".log");
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        processes.put(name, process);
        ports.put(name, port);
        logs.put(name, log);
        return process.pid();
    }

    /** Waits until the instance answers {@code GET /stats}: its listeners started before its HTTP server. */
    void awaitReady(String name) throws InterruptedException, IOException {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        boolean startedAgain = false;
        while (stats(name) == null) {
            if (!processes.get(name).isAlive()) {
                // The free port was picked before the instance bound it, and on a busy machine an
                // outgoing connection can take it meanwhile: one more start, on another port.
                if (!startedAgain && portTaken(logs.get(name))) {
                    startedAgain = true;
                    start(name);
                    continue;
                }
                throw new IllegalStateException("instance " + name + " ended at start; its log "
                        + logs.get(name) + " ends with:\n" + tail(logs.get(name), 30));
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("instance " + name + " not ready after " + READY_TIMEOUT + "; see " + dir);
            }
            TimeUnit.MILLISECONDS.sleep(200);
        }
    }

    /** The instance's {@code GET /stats} body, or null when it does not answer. */
    String stats(String name) {
        return get(name, "/stats");
    }

    /** The body of the instance's answer to {@code GET path}, or null when it does not answer 200. */
    String get(String name, String path) {
        Process process = processes.get(name);
        if (process == null || !process.isAlive()) {
            return null;
        }
        try {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + ports.get(name) + path)).timeout(Duration.ofSeconds(2)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == 200 ? response.body() : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** SIGKILL, as a crash; returns the pid killed. */
    long kill(String name) throws InterruptedException {
        Process process = processes.get(name);
        process.destroyForcibly().waitFor();
        return process.pid();
    }

    long pid(String name) {
        return processes.get(name).pid();
    }

    /** Instances started in all, restarts included. */
    int starts() {
        return incarnations.values().stream().mapToInt(Integer::intValue).sum();
    }

    /** Stops every instance as an operator would (SIGTERM: Micronaut closes its listeners in order). */
    @Override
    public void close() {
        for (Process process : processes.values()) {
            process.destroy();
        }
        try {
            for (Process process : processes.values()) {
                if (!process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                    process.destroyForcibly().waitFor();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            destroyAll();
        }
    }

    private void destroyAll() {
        processes.values().forEach(Process::destroyForcibly);
    }

    private static String tail(Path log, int lines) throws IOException {
        List<String> all = Files.exists(log) ? Files.readAllLines(log) : List.of();
        return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    }

    private static boolean portTaken(Path log) throws IOException {
        String text = Files.exists(log) ? Files.readString(log) : "";
        return text.contains("BindException") || text.contains("Address already in use");
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
