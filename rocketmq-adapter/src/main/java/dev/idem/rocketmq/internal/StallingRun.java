package dev.idem.rocketmq.internal;

import dev.idem.core.Batch;
import dev.idem.core.Disposition;
import dev.idem.core.Envelope;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.Outcome;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one listener call's messages through the processor, in order, and stalls on deferrals
 * instead of handing them back to the broker (decision 0012): every redelivery raises RocketMQ's
 * {@code reconsumeTimes}, and at {@code maxReconsumeTimes} the broker dead-letters the message into
 * {@code %DLQ%<group>} behind Idem's back, so a Redis outage answered with redeliveries spends that
 * count in seconds. While a message is {@link Outcome.Deferred} (claim store, business check or
 * dead-letter topic unavailable) the call waits with backoff and tries again from that message,
 * for at most {@code maxStall}; only then, or when the consumer closes, does the broker get the
 * message back. Not public API. Thread-safe (no state of its own).
 */
public final class StallingRun {

    private static final Logger LOG = LoggerFactory.getLogger(StallingRun.class);
    // The first wait, and the ceiling of the doubling waits: a store that comes back is noticed within
    // ten seconds, and a long outage costs one probe per consume thread every ten seconds.
    private static final Duration FIRST_WAIT = Duration.ofMillis(500);
    private static final Duration MAX_WAIT = Duration.ofSeconds(10);

    /**
     * Where a call ended.
     *
     * @param acknowledged how many leading messages are settled and may be acknowledged
     * @param stopped      the outcome of the first message to redeliver, or null when all are settled
     */
    public record Result(int acknowledged, @Nullable Outcome stopped) {
    }

    /** Where a call's messages are claimed: in a batch of their own, or with other calls' ({@link ClaimGroups}). */
    public interface Opener {
        /** Claims {@code envelopes}; the run must be closed. */
        Run open(List<Envelope> envelopes);

        /** Each call's messages in a batch of their own. */
        static <T> Opener alone(IdempotentProcessor<T> processor) {
            return envelopes -> {
                Batch<T> batch = processor.open(envelopes);
                return new Run() {
                    @Override
                    public Outcome process(int index) {
                        return batch.process(index);
                    }

                    @Override
                    public void close() {
                        batch.close();
                    }
                };
            };
        }
    }

    /** A call's claimed messages, processed by index (from the call's first one). */
    public interface Run extends AutoCloseable {
        /** Processes message {@code index} (see {@link Batch#process}). */
        Outcome process(int index);

        /** Done with these messages: what never started is released (see {@link Batch#release}, {@link Batch#close}). */
        @Override
        void close();
    }

    private StallingRun() {
    }

    /**
     * Processes {@code envelopes} until one must be redelivered, stalling on deferrals for at most
     * {@code maxStall} in all.
     */
    public static Result run(Opener opener, List<Envelope> envelopes, ListenerGate gate, Duration maxStall) {
        long deadline = System.nanoTime() + maxStall.toNanos();
        Duration wait = Duration.ZERO;
        int from = 0;
        boolean stalled = false;
        while (true) {
            int index = from;
            Outcome stopped = null;
            try (Run batch = opener.open(envelopes.subList(from, envelopes.size()))) {
                for (; index < envelopes.size(); index++) {
                    Outcome outcome = batch.process(index - from);
                    if (!outcome.disposition().acknowledges()) {
                        stopped = outcome;
                        break;
                    }
                }
            }
            if (stopped == null) {
                if (stalled) {
                    LOG.info("{}: processing resumed after a stall", envelopes.get(0).topic());
                }
                return new Result(envelopes.size(), null);
            }
            if (stopped.disposition().action() != Disposition.Action.DEFER) {
                return new Result(index, stopped);
            }
            wait = next(wait, stopped.disposition().delay());
            if (System.nanoTime() + wait.toNanos() > deadline) {
                LOG.warn("{}: still deferred after stalling {} ({}); handing {} message(s) back to the broker",
                        stopped.key(), maxStall, stopped, envelopes.size() - index);
                return new Result(index, stopped);
            }
            if (!stalled) {
                LOG.info("{}: deferred ({}); stalling up to {} instead of spending the broker's redelivery count",
                        stopped.key(), stopped, maxStall);
                stalled = true;
            }
            if (!gate.pause(wait)) {
                return new Result(index, stopped);
            }
            from = index;
        }
    }

    private static Duration next(Duration previous, Duration suggested) {
        Duration doubled = previous.isZero() ? FIRST_WAIT : previous.multipliedBy(2);
        Duration wait = doubled.compareTo(suggested) > 0 ? doubled : suggested;
        return wait.compareTo(MAX_WAIT) > 0 ? MAX_WAIT : wait;
    }
}
