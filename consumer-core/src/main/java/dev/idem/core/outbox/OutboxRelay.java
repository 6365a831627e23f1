package dev.idem.core.outbox;

import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import io.micrometer.core.instrument.MeterRegistry;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The embedded relay: a thread that publishes the outbox's committed rows through an
 * {@link OutboxPublisher}, in position order per destination and key, and deletes them (or marks
 * them sent). Any number of processes may run one on the same table: each partition is worked on
 * by one relay at a time. While the broker is down it backs off (up to {@code maxBackoff}) and then
 * drains the backlog; a row the publisher calls poison goes to the dead state with its reason and
 * holds up nothing. Publication is at least once: a relay that dies between publishing and marking
 * leaves the rows to be published again, with the same ids. Thread-safe.
 */
public final class OutboxRelay implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(OutboxRelay.class);
    private static final Duration FIRST_BACKOFF = Duration.ofMillis(100);
    private static final Duration PURGE_EVERY = Duration.ofMinutes(1);
    private static final int PURGE_BATCH = 1000;
    private static final Duration STATUS_EVERY = Duration.ofSeconds(10);
    // How soon a relay looks again after this process wrote rows (their commit follows the write).
    private static final Duration SOON = Duration.ofMillis(5);

    private final RelayPartitions partitions;
    private final DataSource dataSource;
    private final String table;
    private final Clock clock;
    private final Duration pollInterval;
    private final Duration maxBackoff;
    private final Duration keepSent;
    private final AtomicLong written;
    private final OutboxOperations operations;
    private final AtomicLong published = new AtomicLong();
    private final AtomicLong retried = new AtomicLong();
    private final AtomicLong dead = new AtomicLong();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition wake = lock.newCondition();
    private volatile boolean running;
    private boolean woken;
    private @Nullable Thread thread;
    private Instant nextPurge = Instant.MIN;
    private Instant nextStatus = Instant.MIN;
    private volatile @Nullable OutboxStatus lastStatus;
    // When a pass last ran to its end (or the relay started), and why the last one did not.
    private volatile Instant lastPass = Instant.MIN;
    private volatile @Nullable String lastFailure;
    // Read only once someone asks (a gauge, a health check): the query is not free on a large table.
    private volatile boolean statusWanted;

    private OutboxRelay(Builder b) {
        this.partitions = new RelayPartitions(b.dataSource, b.table, b.clock, b.publisher, b.batchSize, b.keepSent,
                b.maxBackoff);
        this.dataSource = b.dataSource;
        this.table = b.table;
        this.clock = b.clock;
        this.pollInterval = b.pollInterval;
        this.maxBackoff = b.maxBackoff;
        this.keepSent = b.keepSent;
        this.written = b.written;
        this.operations = new OutboxOperations(b.dataSource, b.table, b.clock);
        if (b.meterRegistry != null) {
            statusWanted = true;
            OutboxMeters.bind(b.meterRegistry, this, b.table);
        }
    }

    /** Starts the relay's thread; a relay starts once. */
    public synchronized OutboxRelay start() {
        if (thread != null) {
            throw new IllegalStateException("the relay was started already");
        }
        running = true;
        Thread t = new Thread(this::loop, "idem-outbox-relay-" + table);
        t.setDaemon(true);
        thread = t;
        t.start();
        return this;
    }

    /** Asks the relay to look now rather than at its next poll: e.g. right after a commit that wrote rows. */
    public void wake() {
        lock.lock();
        try {
            woken = true;
            wake.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * One pass over the partitions on the calling thread (tests, a scheduler of the application's own):
     * publishes what it can lock, returns how many rows it published.
     */
    public int publishOnce() throws SQLException, InterruptedException {
        synchronized (this) {
            if (thread != null) {
                throw new IllegalStateException("the relay's own thread publishes: publishOnce is for a relay never started");
            }
        }
        RelayPartitions.Pass pass = partitions.pass();
        count(pass);
        return pass.published();
    }

    /**
     * Whether the outbox is being published: down when the relay's thread is not running, when no pass
     * has run to its end for longer than {@code maxAge} (the database failing every pass, a pass hung),
     * or when the oldest unsent row it last saw has waited longer than {@code maxAge} (a broker down that
     * long, a destination that fails every time). What a framework's health check reports.
     */
    public Health health(Duration maxAge) {
        Objects.requireNonNull(maxAge, "maxAge");
        if (!running) {
            return new Health(false, "the relay on " + table + " is not running");
        }
        Instant now = clock.instant();
        Instant passed = lastPass;
        if (passed.isAfter(Instant.MIN) && Duration.between(passed, now).compareTo(maxAge) > 0) {
            return new Health(false, "the relay on " + table + " has not completed a pass for "
                    + Duration.between(passed, now).toSeconds() + " s (more than " + maxAge.toSeconds() + " s): "
                    + Objects.requireNonNullElse(lastFailure, "a pass is still under way"));
        }
        Optional<OutboxStatus> status = lastStatus();
        if (status.isEmpty()) {
            return new Health(true, "the relay on " + table + " has not read the table yet");
        }
        Optional<Duration> age = status.get().oldestUnsentAge(now);
        if (age.isPresent() && age.get().compareTo(maxAge) > 0) {
            return new Health(false, "the oldest unsent row of " + table + " has waited " + age.get().toSeconds()
                    + " s (more than " + maxAge.toSeconds() + " s); " + status.get().backlog() + " unsent");
        }
        return new Health(true, status.get().backlog() + " unsent, " + status.get().dead() + " dead in " + table);
    }

    /** What {@link #health} found: up or down, and why. */
    public record Health(boolean up, String detail) {
    }

    /** Rows this relay published since it was built. */
    public long published() {
        return published.get();
    }

    /** Failed publications this relay will try again (the broker unreachable), since it was built. */
    public long retried() {
        return retried.get();
    }

    /** Rows this relay sent to the dead state, since it was built. */
    public long deadLettered() {
        return dead.get();
    }

    /** Whether the relay's thread runs (false before {@link #start}, after {@link #close}, or if it died). */
    public boolean isRunning() {
        return running;
    }

    /**
     * What waited in the outbox when the running relay last read it (every 10 s, from the first call
     * on): for a health check ({@link OutboxStatus#oldestUnsentAge(Instant)} with now, and
     * {@link #isRunning()}) and the gauges, without a query each. Empty before the first read.
     */
    public Optional<OutboxStatus> lastStatus() {
        statusWanted = true;
        return Optional.ofNullable(lastStatus);
    }

    private void count(RelayPartitions.Pass pass) {
        published.addAndGet(pass.published());
        retried.addAndGet(pass.retried());
        dead.addAndGet(pass.dead());
    }

    private void loop() {
        try {
            relay();
        } finally {
            running = false;
        }
    }

    private void relay() {
        Duration backoff = Duration.ZERO;
        long seen = written.get();
        lastPass = clock.instant();
        while (running) {
            Duration pause;
            try {
                long before = written.get();
                RelayPartitions.Pass pass = partitions.pass();
                count(pass);
                // Rows written here since the last pass may commit any moment: look again soon.
                boolean recent = (before != seen || pass.published() > 0) && pass.retried() == 0;
                seen = before;
                if (pass.retried() > 0 && pass.published() == 0) {
                    backoff = next(backoff);
                    pause = backoff;
                } else {
                    backoff = Duration.ZERO;
                    pause = pass.more() ? Duration.ZERO : recent && SOON.compareTo(pollInterval) < 0 ? SOON
                            : pollInterval;
                }
                purgeWhenDue();
                readStatusWhenDue();
                lastPass = clock.instant();
                lastFailure = null;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (SQLException | RuntimeException e) {
                backoff = next(backoff);
                pause = backoff;
                lastFailure = e.toString();
                LOG.warn("outbox relay on {} failed, trying again in {} ms: {}", table, pause.toMillis(), e.toString());
            } catch (Error e) {
                LOG.error("outbox relay on {} stopped: nothing is published from this process until it restarts",
                        table, e);
                throw e;
            }
            if (!pause.isZero() && !sleep(pause)) {
                return;
            }
        }
    }

    private Duration next(Duration backoff) {
        Duration doubled = backoff.isZero() ? FIRST_BACKOFF : backoff.multipliedBy(2);
        return doubled.compareTo(maxBackoff) > 0 ? maxBackoff : doubled;
    }

    /** Waits {@code pause} or until woken or closed; false when closed. */
    private boolean sleep(Duration pause) {
        lock.lock();
        try {
            long left = pause.toNanos();
            while (running && !woken && left > 0) {
                left = wake.awaitNanos(left);
            }
            woken = false;
            return running;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            lock.unlock();
        }
    }

    private void readStatusWhenDue() throws SQLException {
        Instant now = clock.instant();
        if (!statusWanted || now.isBefore(nextStatus)) {
            return;
        }
        nextStatus = now.plus(STATUS_EVERY);
        lastStatus = OutboxStatus.read(dataSource, table, clock);
    }

    /** Deletes rows marked sent longer than {@code keepSent} ago, a batch at a time, once a minute. */
    private void purgeWhenDue() throws SQLException {
        Instant now = clock.instant();
        if (keepSent.isZero() || now.isBefore(nextPurge)) {
            return;
        }
        nextPurge = now.plus(PURGE_EVERY);
        operations.purge(OutboxOperations.State.SENT, keepSent, PURGE_BATCH);
    }

    /** Stops the thread, letting a publication under way finish (at most the publisher's own timeout). */
    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            running = false;
            t = thread;
        }
        wake();
        if (t != null && t != Thread.currentThread()) {
            try {
                t.join(TimeUnit.SECONDS.toMillis(60));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Builds an {@link OutboxRelay}: {@link JdbcOutbox#relay}. Not thread-safe. */
    public static final class Builder {

        private final DataSource dataSource;
        private final String table;
        private final Clock clock;
        private final OutboxPublisher publisher;
        private final AtomicLong written;
        private Duration pollInterval = Duration.ofMillis(100);
        private int batchSize = 1_000;
        private Duration keepSent = Duration.ZERO;
        private Duration maxBackoff = Duration.ofSeconds(10);
        // A Micrometer MeterRegistry, or null for no metrics; typed loosely so Micrometer is optional.
        private @Nullable Object meterRegistry;

        Builder(DataSource dataSource, String table, Clock clock, OutboxPublisher publisher, AtomicLong written) {
            this.dataSource = dataSource;
            this.written = written;
            this.table = table;
            this.clock = clock;
            this.publisher = Objects.requireNonNull(publisher, "publisher");
        }

        /**
         * How often an idle relay looks for committed rows: how soon it finds rows another process
         * wrote. Rows this process wrote are looked for within milliseconds. Default 100 ms.
         */
        public Builder pollInterval(Duration pollInterval) {
            this.pollInterval = pollInterval;
            return this;
        }

        /** Rows published per pass (one transaction, one wait for the broker). Default 1,000. */
        public Builder batchSize(int batchSize) {
            this.batchSize = batchSize;
            return this;
        }

        /**
         * How long published rows are kept, marked sent (for {@code idem outbox show}); zero deletes them
         * once published. Default zero.
         */
        public Builder keepSent(Duration keepSent) {
            this.keepSent = keepSent;
            return this;
        }

        /** The longest wait between tries while the broker or the database is unreachable. Default 10 s. */
        public Builder maxBackoff(Duration maxBackoff) {
            this.maxBackoff = maxBackoff;
            return this;
        }

        /**
         * Where the relay's meters go (Micrometer must then be on the class path): published, retried
         * and dead-lettered rows, and the table's backlog, dead rows and oldest unsent row's age.
         * Default: none.
         */
        public Builder meterRegistry(MeterRegistry meterRegistry) {
            this.meterRegistry = Objects.requireNonNull(meterRegistry, "meterRegistry");
            return this;
        }

        /**
         * Builds the relay, not started.
         *
         * @throws IllegalArgumentException naming the setting that is out of range
         */
        public OutboxRelay build() {
            positive("pollInterval", pollInterval);
            positive("maxBackoff", maxBackoff);
            if (keepSent == null || keepSent.isNegative()) {
                throw new IllegalArgumentException("keepSent must be >= 0 but was " + keepSent);
            }
            if (batchSize < 1) {
                throw new IllegalArgumentException("batchSize must be >= 1 but was " + batchSize);
            }
            return new OutboxRelay(this);
        }

        private static void positive(String name, @Nullable Duration value) {
            if (value == null || value.isNegative() || value.isZero()) {
                throw new IllegalArgumentException(name + " must be > 0 but was " + value);
            }
        }
    }
}
