package dev.idem.kafka.share;

import dev.idem.core.IdempotentProcessor;
import dev.idem.kafka.internal.ConsumerLifecycle;
import dev.idem.kafka.internal.LoopEvents;
import dev.idem.kafka.share.Held.Id;
import dev.idem.kafka.share.Held.Verdict;
import dev.idem.kafka.share.internal.DeliveryLimit;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.ShareConsumer;
import org.apache.kafka.common.TopicIdPartition;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The poll thread of an {@link IdemKafkaShareConsumer} (decision 0032). Records run on Idem's
 * workers; this thread alone touches the share consumer. Before each poll it acknowledges every
 * record the last poll returned: finished ones with their verdict (ACCEPT, or RELEASE once the
 * backoff has passed), the others with RENEW, which extends their acquisition lock; the client
 * hands a renewed record back in a later poll, where it is recognised and not started again.
 * Confined to its own thread, except {@link #stop()}.
 *
 * @param <T> payload type
 */
final class ShareLoop<T> implements ConsumerLifecycle.Loop {

    private static final Logger LOG = LoggerFactory.getLogger(ShareLoop.class);
    private static final Duration POLL_WAIT = Duration.ofMillis(100);
    // How often the poll thread looks at running records: short against a handler, long against a CPU.
    private static final Duration TICK = Duration.ofMillis(20);
    // Finished records wait at most this long for slow ones of the same poll before they are
    // acknowledged and the slow ones renewed: a renewal a second per slow record is cheap.
    private static final Duration SETTLE_AFTER = Duration.ofSeconds(1);
    // The broker's lock when the client has not said yet (Kafka's group.share.record.lock.duration.ms).
    private static final Duration DEFAULT_LOCK = Duration.ofSeconds(30);

    /** Fixed settings of the loop. */
    record Settings(List<String> topics, IntSupplier deliveryLimit, Duration closeTimeout, Clock clock) {
    }

    private final ShareConsumer<byte[], byte[]> consumer;
    private final ShareRuns<T> runs;
    private final Settings settings;
    private final LoopEvents events;
    private final Runnable release;
    private final Map<Id, Held> held = new HashMap<>();
    // Returned by the last poll: each is acknowledged (for good, or RENEW) before the next poll.
    private final List<Held> flight = new ArrayList<>();
    private final Semaphore changed = new Semaphore(0);
    // Acknowledgements the broker refused (the lock had expired): those records are no longer ours.
    private final Queue<Id> refused = new ConcurrentLinkedQueue<>();
    // Set once the poll thread has closed the client: the last batch to close then releases the rest.
    private volatile boolean ended;
    private volatile boolean stopping;
    private @Nullable Instant flightStarted;
    private boolean joined;

    /** @param release closes the processor and publishers (idempotent); run once no record runs any more */
    ShareLoop(ShareConsumer<byte[], byte[]> consumer, IdempotentProcessor<T> processor, Executor workers,
              Settings settings, LoopEvents events, Runnable release) {
        this.consumer = consumer;
        this.settings = settings;
        this.runs = new ShareRuns<>(processor, workers, settings.clock(), settings.deliveryLimit(), events,
                changed::release, this::releaseWhenIdle);
        this.events = events;
        this.release = release;
    }

    /** Stop taking work: running records finish, held ones are released. Any thread. */
    @Override
    public void stop() {
        stopping = true;
        changed.release();
    }

    @Override
    public void run() {
        boolean crashed = false;
        try {
            consumer.setAcknowledgementCommitCallback(this::acknowledged);
            consumer.subscribe(settings.topics());
            while (!stopping && runs.crash() == null) {
                cycle(false);
            }
            if (runs.crash() == null) {
                drain();
            }
            crashed = runs.crash() != null;
            if (crashed) {
                throw runs.crash();
            }
        } catch (Throwable e) {
            // A JVM error is a crash: nothing more is acknowledged; the records' locks expire.
            crashed = crashed || e instanceof Error;
            stopping = true;
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            LOG.error("Kafka share consumer for {} stopped by {}; records not acknowledged will be delivered again",
                    settings.topics(), e.getClass().getName(), e);
            events.failed(e, true);
        } finally {
            try {
                consumer.close(crashed ? Duration.ZERO : settings.closeTimeout());
            } catch (RuntimeException e) {
                LOG.warn("closing the Kafka share consumer for {} failed", settings.topics(), e);
            }
            ended = true;
            if (runs.running() > 0) {
                LOG.warn("{} record(s) still running after {}; lease renewal and the dead-letter producer are "
                        + "closed when they end", runs.running(), settings.closeTimeout());
            }
            releaseWhenIdle();
            events.ended();
        }
    }

    /** Starts due re-runs, then, when the last poll's records are ready, acknowledges them and polls. */
    private void cycle(boolean draining) throws InterruptedException {
        forgetRefused();
        Instant now = settings.clock().instant();
        forgetExpired(now);
        if (!draining) {
            rerunDue(now);
        }
        if (!flight.isEmpty() && !ready(now, draining)) {
            changed.tryAcquire(TICK.toMillis(), TimeUnit.MILLISECONDS);
            changed.drainPermits();
            return;
        }
        acknowledgeFlight(now, draining, false);
        if (draining && held.isEmpty()) {
            // Nothing renewed is out: a poll now would fetch new records only to release them.
            return;
        }
        ConsumerRecords<byte[], byte[]> polled = consumer.poll(POLL_WAIT);
        if (!joined) {
            joined = true;
            events.joined();
        }
        take(polled, settings.clock().instant(), draining);
    }

    /**
     * Whether the last poll's records may be acknowledged now. The client fetches nothing new while
     * one of them is renewed, so there is no gain in renewing early: the round comes when all are
     * settled, when the oldest lock is half gone, or a second after some settled (their acceptance
     * should not wait for a slow neighbour).
     */
    private boolean ready(Instant now, boolean draining) {
        boolean anySettled = false;
        boolean allSettled = true;
        Instant oldest = null;
        for (Held h : flight) {
            boolean settled = settles(h.verdict, now, draining);
            anySettled |= settled;
            allSettled &= settled;
            oldest = oldest == null || h.returned.isBefore(oldest) ? h.returned : oldest;
        }
        Duration lock = lock();
        // Renew at half the lock: the other half covers a slow poll and the renewal's round trip.
        return allSettled
                || (oldest != null && !now.isBefore(oldest.plus(lock.dividedBy(2))))
                || (anySettled && flightStarted != null && !now.isBefore(flightStarted.plus(SETTLE_AFTER)));
    }

    /**
     * Whether a record with this verdict is acknowledged for good in a round now: its time has come,
     * or (draining) it has any verdict at all, since nothing is run again while closing.
     */
    private static boolean settles(@Nullable Verdict verdict, Instant now, boolean draining) {
        return verdict != null && (draining || (!verdict.rerun() && !verdict.at().isAfter(now)));
    }

    /**
     * Acknowledges the last poll's records: settled ones for good, running ones RENEW. While
     * {@code draining}, records waiting for a re-run or a later release are released now; at the
     * {@code close}, every record not settled is released, running or not.
     */
    private void acknowledgeFlight(Instant now, boolean draining, boolean close) {
        for (Held h : flight) {
            Verdict verdict = h.verdict;
            AcknowledgeType type;
            if (settles(verdict, now, false)) {
                type = Objects.requireNonNull(verdict, "settled").acknowledgement();
            } else if (close || settles(verdict, now, draining)) {
                type = AcknowledgeType.RELEASE;
                if (lastDelivery(h)) {
                    LOG.warn("{} was on its last delivery ({} = {}) when the consumer closed: the broker archives it "
                            + "without a dead letter", h.id, DeliveryLimit.GROUP_SETTING,
                            settings.deliveryLimit().getAsInt());
                }
            } else {
                type = AcknowledgeType.RENEW;
            }
            try {
                consumer.acknowledge(h.record, type);
            } catch (IllegalStateException e) {
                // The client no longer holds it (its lock was lost): it is the group's again.
                LOG.warn("could not acknowledge {} as {} ({}); it will be delivered again", h.id, type, e.getMessage());
                held.remove(h.id);
                continue;
            }
            if (type != AcknowledgeType.RENEW) {
                held.remove(h.id);
            } else {
                h.renewed = now;
            }
        }
        flight.clear();
    }

    private Duration lock() {
        return consumer.acquisitionLockTimeoutMs().map(ms -> Duration.ofMillis(ms)).orElse(DEFAULT_LOCK);
    }

    /**
     * Renewed records the client has not handed back within two locks of their renewal (the RENEW
     * reaches the broker with a later request, at most a lock later): the broker's lock has ended, so they are no longer this member's (a run still going on ends unacknowledged,
     * and a later delivery finds its key busy or done). Not held any more: not run again, not waited for.
     */
    private void forgetExpired(Instant now) {
        Duration lock = lock();
        Duration gone = lock.multipliedBy(2);
        held.values().removeIf(h -> {
            boolean expired = h.renewed != null && now.isAfter(h.renewed.plus(gone)) && !flight.contains(h);
            if (expired) {
                LOG.warn("{} was renewed at {} and not handed back by the client within its lock ({}); no longer "
                        + "held", h.id, h.renewed, lock);
            }
            return expired;
        });
    }

    private boolean lastDelivery(Held h) {
        return h.lastDelivery(settings.deliveryLimit().getAsInt());
    }

    /** Records of a poll: new ones start, renewed ones (still held) rejoin the flight. */
    private void take(ConsumerRecords<byte[], byte[]> polled, Instant now, boolean draining) {
        if (polled.isEmpty()) {
            return;
        }
        flightStarted = now;
        List<Held> fresh = new ArrayList<>();
        for (ConsumerRecord<byte[], byte[]> record : polled) {
            Id id = Id.of(record);
            Held h = held.get(id);
            if (h != null && h.deliveries != Held.deliveries(record)) {
                // Not our renewed record coming back: its lock expired and this is a new delivery, whose
                // verdict (and whether it is the last) is its own. A run of the old one still going on
                // holds the key: the new one finds it busy.
                h = null;
            }
            if (h == null) {
                h = new Held(record, now);
                held.put(id, h);
                if (draining) {
                    // Closing: not started, handed straight back.
                    h.verdict = new Verdict(AcknowledgeType.RELEASE, now);
                } else {
                    fresh.add(h);
                }
            }
            h.record = record;
            h.returned = now;
            flight.add(h);
        }
        runs.start(fresh);
    }

    private void rerunDue(Instant now) {
        List<Held> due = new ArrayList<>();
        for (Held h : held.values()) {
            Verdict verdict = h.verdict;
            if (verdict != null && verdict.rerun() && !verdict.at().isAfter(now)) {
                h.verdict = null;
                due.add(h);
            }
        }
        runs.start(due);
    }

    /** Closes the processor and publishers when the client is closed and no batch is open (release runs once). */
    private void releaseWhenIdle() {
        if (ended && runs.running() == 0) {
            release.run();
        }
    }

    /**
     * Stop: nothing new starts and nothing is run again; running records may finish within the close
     * timeout (their locks renewed meanwhile); then what finished is acknowledged and the rest released.
     */
    private void drain() throws InterruptedException {
        long deadline = System.nanoTime() + settings.closeTimeout().toNanos();
        while (System.nanoTime() < deadline && runs.crash() == null && (anyRunning() || held.size() > flight.size())) {
            cycle(true);
        }
        acknowledgeFlight(settings.clock().instant(), true, true);
        consumer.commitSync(settings.closeTimeout());
        if (!held.isEmpty()) {
            LOG.info("closing with {} record(s) renewed and not yet returned, or still running: the broker delivers "
                    + "them again when their locks expire, and Idem finds them done or busy", held.size());
        }
    }

    /** Whether a record this loop still holds is running (one the broker took back does not count). */
    private boolean anyRunning() {
        for (Held h : held.values()) {
            if (h.running()) {
                return true;
            }
        }
        return false;
    }

    /** Told by the client, on this thread, how acknowledgements went. */
    private void acknowledged(Map<TopicIdPartition, Set<Long>> offsets, Exception failure) {
        if (failure == null) {
            return;
        }
        LOG.warn("the broker refused acknowledgements of {} ({}); those records will be delivered again", offsets,
                failure.toString());
        offsets.forEach((partition, set) -> set.forEach(offset ->
                refused.add(new Id(partition.topic(), partition.partition(), offset))));
    }

    private void forgetRefused() {
        for (Id id = refused.poll(); id != null; id = refused.poll()) {
            Held h = held.get(id);
            // A record still running stays counted; its outcome is then simply not acknowledged.
            if (h != null && !flight.contains(h)) {
                held.remove(id);
            }
        }
    }
}
