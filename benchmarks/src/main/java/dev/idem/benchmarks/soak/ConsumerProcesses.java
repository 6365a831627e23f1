package dev.idem.benchmarks.soak;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The consumer processes, one per slot: child JVMs on this JVM's class path, each logging to a file
 * of its own incarnation. Kills are SIGKILL, pauses SIGSTOP and SIGCONT. Not thread-safe: the
 * orchestrator and its chaos loop take turns.
 */
final class ConsumerProcesses implements AutoCloseable {

    private static final Duration READY_TIMEOUT = Duration.ofSeconds(90);

    private final ConsumerSpec spec;
    private final Process[] processes;
    private final int[] incarnations;
    private final boolean[] stopped;

    ConsumerProcesses(ConsumerSpec spec, int count) {
        this.spec = spec;
        this.processes = new Process[count];
        this.incarnations = new int[count];
        this.stopped = new boolean[count];
    }

    int size() {
        return processes.length;
    }

    /** Starts a process in {@code slot}; returns its pid. */
    long start(int slot) throws IOException {
        incarnations[slot]++;
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx256m");
        // Two cores for everything: the serial collector leaves them to the work.
        command.add("-XX:+UseSerialGC");
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-Duser.home=" + spec.dir());
        command.add("-Djava.io.tmpdir=" + spec.dir());
        command.add("-Drocketmq.client.logUseSlf4j=true");
        command.add("-Dlogback.configurationFile=soak-logback.xml");
        command.addAll(spec.properties(slot));
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(SoakConsumer.class.getName());
        Path log = spec.dir().resolve("consumer-" + slot + "-" + incarnations[slot] + ".log");
        processes[slot] = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        stopped[slot] = false;
        return processes[slot].pid();
    }

    /** Waits until the process in {@code slot} says it consumes. */
    void awaitReady(int slot) throws InterruptedException {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        Path ready = spec.dir().resolve("ready-" + processes[slot].pid());
        while (!Files.exists(ready)) {
            if (!processes[slot].isAlive()) {
                throw new IllegalStateException("consumer " + slot + " died at start; see its log in " + spec.dir());
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("consumer " + slot + " not ready after " + READY_TIMEOUT);
            }
            TimeUnit.MILLISECONDS.sleep(100);
        }
    }

    long pid(int slot) {
        return processes[slot].pid();
    }

    boolean stopped(int slot) {
        return stopped[slot];
    }

    /** SIGKILL, as a crash: nothing is closed, committed or released. Returns the pid killed. */
    long kill(int slot) throws InterruptedException {
        long pid = processes[slot].pid();
        processes[slot].destroyForcibly().waitFor();
        return pid;
    }

    /** SIGSTOP: the process, its lease renewal included, freezes until {@link #resume}. */
    void pause(int slot) throws IOException, InterruptedException {
        signal("-STOP", slot);
        stopped[slot] = true;
    }

    /** SIGCONT. */
    void resume(int slot) throws IOException, InterruptedException {
        signal("-CONT", slot);
        stopped[slot] = false;
    }

    private void signal(String signal, int slot) throws IOException, InterruptedException {
        int exit = new ProcessBuilder("kill", signal, Long.toString(processes[slot].pid())).inheritIO().start().waitFor();
        if (exit != 0) {
            throw new IllegalStateException("kill " + signal + " " + processes[slot].pid() + " exited with " + exit);
        }
    }

    /** Whether every slot's process is alive (a child that died by itself is a finding). */
    List<Integer> dead() {
        List<Integer> dead = new ArrayList<>();
        for (int slot = 0; slot < processes.length; slot++) {
            if (processes[slot] == null || !processes[slot].isAlive()) {
                dead.add(slot);
            }
        }
        return dead;
    }

    /** Processes started in all, first starts included. */
    int started() {
        int sum = 0;
        for (int incarnation : incarnations) {
            sum += incarnation;
        }
        return sum;
    }

    @Override
    public void close() throws InterruptedException {
        for (Process process : processes) {
            if (process != null) {
                process.destroyForcibly().waitFor();
            }
        }
    }
}
