package dev.idem.testkit.internal;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One Redis command at a time to a loopback {@code redis-server}, over a fresh connection, and the
 * stop of such processes, for the test kit's process fixtures (no client library). Internal to the
 * test kit.
 */
public final class Resp {

    private Resp() {
    }

    /**
     * Sends one command and returns the reply as text: a simple, integer or bulk reply as is, an
     * array of bulk strings one per line.
     *
     * @throws IllegalStateException on an error reply
     * @throws UncheckedIOException  when nothing answers on {@code port}
     */
    public static String call(int port, String... command) {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.setSoTimeout(5_000);
            StringBuilder request = new StringBuilder("*").append(command.length).append("\r\n");
            for (String part : command) {
                request.append('$').append(part.getBytes(StandardCharsets.UTF_8).length).append("\r\n")
                        .append(part).append("\r\n");
            }
            OutputStream out = socket.getOutputStream();
            out.write(request.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            InputStream in = new BufferedInputStream(socket.getInputStream());
            String line = readLine(in);
            char type = line.charAt(0);
            if (type == '-') {
                throw new IllegalStateException("Redis on port " + port + " refused " + command[0] + ": " + line);
            }
            if (type == '$') {
                return bulk(in, line);
            }
            if (type == '*') {
                int count = Integer.parseInt(line.substring(1));
                List<String> items = new ArrayList<>();
                for (int i = 0; i < count; i++) {
                    items.add(bulk(in, readLine(in)));
                }
                return String.join("\n", items);
            }
            return line.substring(1);
        } catch (IOException e) {
            throw new UncheckedIOException("Redis on port " + port + " unreachable", e);
        }
    }

    /** Repeats {@code command} until its reply contains {@code expected}, for up to {@code timeoutMillis}. */
    public static void awaitReply(int port, long timeoutMillis, String expected, String... command) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        String last = "";
        while (System.nanoTime() < deadline) {
            try {
                last = call(port, command);
                if (last.contains(expected)) {
                    return;
                }
            } catch (UncheckedIOException | IllegalStateException notYet) {
                last = notYet.getMessage();
            }
            try {
                TimeUnit.MILLISECONDS.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted waiting for Redis on port " + port, e);
            }
        }
        throw new IllegalStateException("Redis on port " + port + " did not answer '" + expected
                + "' to " + String.join(" ", command) + "; last reply: " + last);
    }

    private static String bulk(InputStream in, String header) throws IOException {
        int length = Integer.parseInt(header.substring(1));
        return length < 0 ? "" : new String(in.readNBytes(length + 2), StandardCharsets.UTF_8).trim();
    }

    private static String readLine(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        int c;
        while ((c = in.read()) != -1 && c != '\n') {
            if (c != '\r') {
                line.append((char) c);
            }
        }
        return line.toString();
    }

    /** Stops {@code processes} (a local {@code redis-server} each): SIGTERM, then SIGKILL after 5 s. */
    public static void stop(List<Process> processes) {
        for (Process process : processes) {
            process.destroy();
        }
        for (Process process : processes) {
            try {
                if (!process.waitFor(5, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
    }
}
