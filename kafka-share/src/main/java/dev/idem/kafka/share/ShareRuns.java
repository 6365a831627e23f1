package dev.idem.kafka.share;

import dev.idem.core.Batch;
import dev.idem.core.Disposition;
import dev.idem.core.Envelope;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.Outcome;
import dev.idem.kafka.internal.KafkaEnvelopes;
import dev.idem.kafka.internal.KafkaFailures;
import dev.idem.kafka.internal.LoopEvents;
import dev.idem.kafka.share.Held.Verdict;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker side of a share consumer: claims a poll's records in one round trip, runs them on the
 * workers and leaves each a verdict from its outcome, which the poll thread acts on. Counts what runs,
 * so the processor closes only once nothing does. Thread-safe.
 *
 * @param <T> payload type
 */
final class ShareRuns<T> {

    private static final Logger LOG = LoggerFactory.getLogger(ShareRuns.class);
    // A busy record is tried again at least this often, whatever the holder's lease: the holder is
    // often this member's own earlier batch, whose completion lands within milliseconds, and a try
    // costs one Redis round trip, never a delivery.
    private static final Duration BUSY_HOLD_MAX = Duration.ofSeconds(1);

    private final IdempotentProcessor<T> processor;
    private final Executor workers;
    private final Clock clock;
    private final IntSupplier deliveryLimit;
    private final LoopEvents events;
    private final Runnable changed;
    private final Runnable batchClosed;
    private final AtomicInteger running = new AtomicInteger();
    private volatile @Nullable Throwable crash;

    /**
     * @param changed     wakes the poll thread: a verdict is in, or a crash
     * @param batchClosed told each time a batch has closed (its completion sent)
     */
    ShareRuns(IdempotentProcessor<T> processor, Executor workers, Clock clock, IntSupplier deliveryLimit,
              LoopEvents events, Runnable changed, Runnable batchClosed) {
        this.processor = processor;
        this.workers = workers;
        this.clock = clock;
        this.deliveryLimit = deliveryLimit;
        this.events = events;
        this.changed = changed;
        this.batchClosed = batchClosed;
    }

    /** Records claimed and not yet closed with their batch. */
    int running() {
        return running.get();
    }

    /** The crash a run met (Redis or the JVM failing under it), or null. */
    @Nullable Throwable crash() {
        return crash;
    }

    /** Claims the records' keys in one round trip and runs them on the workers. */
    void start(List<Held> records) {
        if (records.isEmpty()) {
            return;
        }
        List<Envelope> envelopes = new ArrayList<>(records.size());
        for (Held h : records) {
            ConsumerRecord<byte[], byte[]> record = h.record;
            envelopes.add(KafkaEnvelopes.of(record, h.deliveries));
        }
        running.addAndGet(records.size());
        workers.execute(() -> runBatch(records, envelopes));
    }

    private void runBatch(List<Held> records, List<Envelope> envelopes) {
        Batch<T> batch;
        try {
            batch = processor.open(envelopes);
        } catch (RuntimeException | Error e) {
            if (KafkaFailures.isCrash(e)) {
                records.forEach(h -> decide(h, null));
                ended(records.size());
                crashed(e);
                return;
            }
            // Nothing is claimed: the records are held (not released: no run happened) and tried again.
            Instant again = clock.instant().plusSeconds(1);
            records.forEach(h -> decide(h, new Verdict(null, again)));
            ended(records.size());
            LOG.error("could not claim the keys of {} record(s); trying again in a second", records.size(), e);
            events.failed(e, false);
            return;
        }
        AtomicInteger left = new AtomicInteger(records.size());
        for (int i = 0; i < records.size(); i++) {
            int index = i;
            workers.execute(() -> {
                try {
                    runOne(batch, records.get(index), index);
                } finally {
                    if (left.decrementAndGet() == 0) {
                        try {
                            batch.close();
                        } finally {
                            // Only now: the processor may close once the batch's completion is sent.
                            ended(records.size());
                        }
                    }
                }
            });
        }
    }

    private void runOne(Batch<T> batch, Held h, int index) {
        if (crash != null) {
            decide(h, null);
            return;
        }
        Outcome outcome;
        try {
            outcome = batch.process(index);
        } catch (RuntimeException | Error e) {
            if (KafkaFailures.isCrash(e)) {
                decide(h, null);
                try {
                    batch.abandon();
                } finally {
                    crashed(e);
                }
                return;
            }
            // The core let it escape (a handler Error, a codec returning null): this record's failure.
            // Its claim is neither completed nor released, so it comes back when its lease ends.
            decide(h, failed(h, processor.lease()));
            LOG.error("{} escaped Idem's processing of {}; treating it as this record's failure", e.getClass().getName(),
                    h.id, e);
            events.failed(e, false);
            return;
        }
        Disposition disposition = outcome.disposition();
        if (disposition.acknowledges()) {
            decide(h, new Verdict(AcknowledgeType.ACCEPT, Instant.EPOCH));
        } else if (disposition.action() == Disposition.Action.RETRY) {
            decide(h, failed(h, disposition.delay()));
        } else {
            // Busy or Deferred: no run happened, and a release would spend one of the record's
            // deliveries. Held (its lock renewed) and tried again after the delay.
            Duration delay = disposition.delay();
            if (disposition.action() == Disposition.Action.BUSY && delay.compareTo(BUSY_HOLD_MAX) > 0) {
                delay = BUSY_HOLD_MAX;
            }
            decide(h, new Verdict(null, clock.instant().plus(delay)));
        }
    }

    /**
     * A failed run: released after the backoff, so the broker counts the delivery; on the broker's
     * last delivery, held and run again here instead, because a release then would be archived.
     */
    private Verdict failed(Held h, Duration delay) {
        Instant at = clock.instant().plus(delay);
        return h.lastDelivery(deliveryLimit.getAsInt()) ? new Verdict(null, at) : new Verdict(AcknowledgeType.RELEASE, at);
    }

    /** A run ended with this verdict (null: none, after a crash); the poll thread acts on it. */
    private void decide(Held h, @Nullable Verdict verdict) {
        h.verdict = verdict;
        changed.run();
    }

    /** Records whose batch is closed: when none runs any more, the processor may close. */
    private void ended(int records) {
        running.addAndGet(-records);
        batchClosed.run();
    }

    private void crashed(Throwable e) {
        crash = e;
        changed.run();
    }
}
