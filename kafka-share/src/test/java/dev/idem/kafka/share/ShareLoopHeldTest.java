package dev.idem.kafka.share;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.Backoff;
import dev.idem.core.DedupCheck;
import dev.idem.core.DeliveryHandler;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.InfrastructureException;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.core.memory.InMemoryClaimStore;
import dev.idem.kafka.internal.LoopEvents;
import dev.idem.kafka.internal.MonotonicClock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockShareConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A record the loop renewed that the client never hands back (its lock then ends at the broker):
 * the loop lets it go instead of holding it for ever, re-running it and waiting for it at close.
 * No broker can be made to do this on purpose: Kafka's in-memory share consumer, which hands a
 * record out once, stands in for such a client.
 */
class ShareLoopHeldTest {

    private static final Duration LOCK = Duration.ofSeconds(1);
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(8);

    private final ExecutorService workers = Executors.newFixedThreadPool(2);
    private final AtomicInteger runs = new AtomicInteger();
    private IdempotentProcessor<byte[]> processor;

    @AfterEach
    void close() {
        workers.shutdownNow();
        if (processor != null) {
            processor.close();
        }
    }

    /** A client that hands every record out once, whose locks last {@link #LOCK}. */
    private static final class OnceClient extends MockShareConsumer<byte[], byte[]> {
        @Override
        public Optional<Integer> acquisitionLockTimeoutMs() {
            return Optional.of((int) LOCK.toMillis());
        }
    }

    private Thread start(DeliveryHandler<byte[]> handler, ShareLoop<byte[]>[] loop) {
        processor = IdempotentProcessor.builder(handler).group("g").claims(InMemoryClaimStore.create())
                .dedupCheck(DedupCheck.none()).codec(PayloadCodec.bytes()).keys(KeySource.messageKey())
                .deadLetters(letter -> { }).backoff(Backoff.fixed(Duration.ofMillis(100))).build();
        OnceClient client = new OnceClient();
        client.subscribe(List.of("t"));
        client.addRecord(new ConsumerRecord<>("t", 0, 0L, "k".getBytes(StandardCharsets.UTF_8),
                "v".getBytes(StandardCharsets.UTF_8)));
        loop[0] = new ShareLoop<>(client, processor, workers,
                new ShareLoop.Settings(List.of("t"), () -> 10, CLOSE_TIMEOUT, MonotonicClock.of(dev.idem.core.Ticker.system())),
                new LoopEvents() {
                    @Override
                    public void joined() {
                    }

                    @Override
                    public void failed(Throwable failure, boolean fatal) {
                    }

                    @Override
                    public void ended() {
                    }
                }, () -> { });
        Thread thread = new Thread(loop[0], "share-loop-test");
        thread.start();
        return thread;
    }

    @Test
    void aRenewedRecordNeverHandedBackIsNotRunAgainForEver() throws Exception {
        // Given a record whose handler meets infrastructure trouble every time (held and run again)
        @SuppressWarnings("unchecked")
        ShareLoop<byte[]>[] loop = new ShareLoop[1];
        Thread thread = start(delivery -> {
            runs.incrementAndGet();
            throw new InfrastructureException("database failing over");
        }, loop);
        try {
            await().atMost(Duration.ofSeconds(5)).until(() -> runs.get() >= 2);

            // When its renewed lock has surely ended without the client handing it back
            TimeUnit.MILLISECONDS.sleep(LOCK.multipliedBy(4).toMillis());
            int then = runs.get();
            TimeUnit.MILLISECONDS.sleep(LOCK.multipliedBy(2).toMillis());

            // Then the loop no longer runs it: it is not this member's any more
            assertThat(runs.get()).as("runs after the lock ended").isEqualTo(then);
        } finally {
            loop[0].stop();
            thread.join(CLOSE_TIMEOUT.multipliedBy(2).toMillis());
        }
    }

    @Test
    void aCloseDoesNotWaitForARenewedRecordTheClientNeverHandsBack() throws Exception {
        // Given a record renewed while its handler ran (longer than half its lock), never handed back
        @SuppressWarnings("unchecked")
        ShareLoop<byte[]>[] loop = new ShareLoop[1];
        Thread thread = start(delivery -> {
            runs.incrementAndGet();
            TimeUnit.MILLISECONDS.sleep(LOCK.multipliedBy(2).toMillis());
        }, loop);
        await().atMost(Duration.ofSeconds(5)).until(() -> runs.get() == 1);
        TimeUnit.MILLISECONDS.sleep(LOCK.multipliedBy(4).toMillis());

        // When the loop is stopped
        long start = System.nanoTime();
        loop[0].stop();
        thread.join(CLOSE_TIMEOUT.multipliedBy(2).toMillis());

        // Then it ends without waiting its close timeout for the record
        assertThat(thread.isAlive()).isFalse();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(CLOSE_TIMEOUT.dividedBy(2));
    }
}
