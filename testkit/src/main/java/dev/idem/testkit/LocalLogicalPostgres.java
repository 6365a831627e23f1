package dev.idem.testkit;

import dev.idem.testkit.internal.Ports;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A PostgreSQL server of its own with {@code wal_level=logical}, made with {@code initdb} and run with
 * {@code pg_ctl} on a free loopback port, for change-data-capture tests (Debezium reads its
 * write-ahead log). Needs PostgreSQL's server programs: {@code IDEM_TEST_PG_BIN}, else
 * {@code initdb} on the PATH, else the newest {@code /usr/lib/postgresql/<version>/bin}. Run as root
 * (which PostgreSQL refuses), it runs them as the user {@code postgres}. Close it to stop the server.
 * Not thread-safe.
 */
public final class LocalLogicalPostgres implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(LocalLogicalPostgres.class);
    private static final String USER = "postgres";

    private final Path bin;
    private final Path dir;
    private final int port;
    private final boolean asPostgres;
    // Stops the server if the JVM ends without close(): no postgres outlives its test run.
    private final Thread reaper;

    private LocalLogicalPostgres(Path bin, Path dir, int port, boolean asPostgres) {
        this.bin = bin;
        this.dir = dir;
        this.port = port;
        this.asPostgres = asPostgres;
        this.reaper = new Thread(this::stop, "postgres-logical-reaper");
    }

    /** Whether PostgreSQL's server programs are here. */
    public static boolean available() {
        return binaries().isPresent();
    }

    /**
     * Creates a cluster in a new temporary directory and starts it; returns once it takes connections.
     *
     * @throws IllegalStateException if the programs are missing or the server does not start (its log
     *                               is in the message)
     */
    public static LocalLogicalPostgres start() {
        Path bin = binaries().orElseThrow(() -> new IllegalStateException("PostgreSQL's initdb and pg_ctl are not "
                + "here: set IDEM_TEST_PG_BIN to their directory, or install PostgreSQL's server"));
        boolean root = "root".equals(System.getProperty("user.name"));
        try {
            Path dir = Files.createTempDirectory("idem-pg-logical-");
            if (root) {
                UserPrincipal postgres = dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName(USER);
                Files.setOwner(dir, postgres);
            }
            LocalLogicalPostgres server = new LocalLogicalPostgres(bin, dir, Ports.free(), root);
            server.run("initdb", "-D", dir.resolve("data").toString(), "-U", USER, "-A", "trust", "-E", "UTF8",
                    "--no-sync");
            Runtime.getRuntime().addShutdownHook(server.reaper);
            server.run("pg_ctl", "-D", dir.resolve("data").toString(), "-l", dir.resolve("server.log").toString(),
                    "-w", "-t", "60", "-o", String.join(" ", "-p", String.valueOf(server.port),
                            "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=" + dir,
                            "-c", "wal_level=logical", "-c", "max_replication_slots=8", "-c", "max_wal_senders=8",
                            "-c", "fsync=off", "-c", "synchronous_commit=off"), "start");
            try (Connection connection = server.database().connect()) {
                LOG.info("PostgreSQL with wal_level=logical on port {} ({})", server.port,
                        connection.getMetaData().getDatabaseProductVersion());
            }
            return server;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot prepare a PostgreSQL directory: " + e.getMessage(), e);
        } catch (SQLException e) {
            throw new IllegalStateException("PostgreSQL started but refuses connections: " + e.getMessage(), e);
        }
    }

    /** The server's database {@code postgres}, as user {@code postgres} with no password. */
    public PostgresDatabase database() {
        return new PostgresDatabase("jdbc:postgresql://127.0.0.1:" + port + "/postgres", USER, "");
    }

    /** The server's port on 127.0.0.1. */
    public int port() {
        return port;
    }

    @Override
    public void close() {
        stop();
        try {
            Runtime.getRuntime().removeShutdownHook(reaper);
        } catch (IllegalStateException e) {
            // the JVM is shutting down: the hook runs anyway
        }
    }

    private void stop() {
        try {
            run("pg_ctl", "-D", dir.resolve("data").toString(), "-m", "immediate", "-w", "stop");
        } catch (RuntimeException e) {
            LOG.warn("PostgreSQL on port {} did not stop: {}", port, e.getMessage());
        }
    }

    private void run(String program, String... args) {
        List<String> command = new ArrayList<>();
        if (asPostgres) {
            command.addAll(List.of("runuser", "-u", USER, "--"));
        }
        command.add(bin.resolve(program).toString());
        command.addAll(List.of(args));
        try {
            Path out = Files.createTempFile("idem-pg-", ".out");
            Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                    .redirectOutput(out.toFile()).start();
            if (!process.waitFor(90, TimeUnit.SECONDS) || process.exitValue() != 0) {
                process.destroyForcibly();
                String log = Files.exists(dir.resolve("server.log")) ? Files.readString(dir.resolve("server.log")) : "";
                throw new IllegalStateException(String.join(" ", command) + " failed: " + Files.readString(out) + log);
            }
            Files.deleteIfExists(out);
        } catch (IOException e) {
            throw new UncheckedIOException(String.join(" ", command) + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running " + program, e);
        }
    }

    private static Optional<Path> binaries() {
        String given = System.getenv("IDEM_TEST_PG_BIN");
        if (given != null && !given.isBlank()) {
            return Optional.of(Path.of(given.trim())).filter(LocalLogicalPostgres::hasPrograms);
        }
        String path = System.getenv("PATH");
        if (path != null) {
            for (String entry : path.split(java.io.File.pathSeparator)) {
                if (!entry.isBlank() && hasPrograms(Path.of(entry))) {
                    return Optional.of(Path.of(entry));
                }
            }
        }
        try (Stream<Path> versions = Files.list(Path.of("/usr/lib/postgresql"))) {
            return versions.map(v -> v.resolve("bin")).filter(LocalLogicalPostgres::hasPrograms)
                    .max(Comparator.comparingInt(LocalLogicalPostgres::version));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private static int version(Path bin) {
        Path version = bin.getParent() == null ? null : bin.getParent().getFileName();
        try {
            return version == null ? 0 : Integer.parseInt(version.toString());
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static boolean hasPrograms(Path dir) {
        return Files.isExecutable(dir.resolve("initdb")) && Files.isExecutable(dir.resolve("pg_ctl"));
    }
}
