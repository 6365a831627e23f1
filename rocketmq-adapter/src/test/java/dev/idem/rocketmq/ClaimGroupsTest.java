package dev.idem.rocketmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.DedupCheck;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.core.memory.InMemoryClaimStore;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimRecord;
import dev.idem.core.spi.ClaimRequest;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyContext;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.junit.jupiter.api.Test;

/**
 * Listener calls that arrive while a claim is on its way are claimed together, in one round trip,
 * and each key among them runs once; a call that stops early releases the messages it never started
 * while its group still runs; a processor closing while a group runs completes what it finished.
 */
class ClaimGroupsTest {

    private final InMemoryClaimStore store = InMemoryClaimStore.create();
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    private final CountDownLatch slowRuns = new CountDownLatch(1);
    private final CountDownLatch slowMayEnd = new CountDownLatch(1);

    private IdempotentProcessor<byte[]> processor() {
        return IdempotentProcessor.<byte[]>builder(delivery -> {
                    String key = delivery.key().value();
                    runs.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
                    if (key.startsWith("slow")) {
                        slowRuns.countDown();
                        slowMayEnd.await(10, TimeUnit.SECONDS);
                    }
                    if (key.startsWith("bad")) {
                        throw new IllegalStateException("bad " + key);
                    }
                }).group("g").claims(store).dedupCheck(DedupCheck.none()).codec(PayloadCodec.bytes())
                .keys(KeySource.messageKey()).deadLetters(letter -> { }).lease(Duration.ofSeconds(30))
                .meterRegistry(meters).build();
    }

    @Test
    void callsArrivingWhileAClaimIsOnItsWayAreClaimedTogetherAndEachKeyRunsOnce() throws Exception {
        try (IdempotentProcessor<byte[]> processor = processor()) {
            IdemConcurrentlyListener<byte[]> listener = IdemConcurrentlyListener.of(processor, DelayLevels.defaults(),
                    Duration.ZERO);
            List<Thread> calls = new ArrayList<>();
            synchronized (store) {
                // Given a first call whose claim is on its way (the store is held here)
                calls.add(call(listener, "a-1", "a-2", "a-3"));
                await().atMost(Duration.ofSeconds(5)).until(() -> calls.get(0).getState() == Thread.State.BLOCKED);
                // When three more calls arrive meanwhile, two of them with a copy of one key
                calls.add(call(listener, "b-1", "copy", "b-2"));
                calls.add(call(listener, "c-1", "c-2", "copy"));
                calls.add(call(listener, "d-1"));
                await().atMost(Duration.ofSeconds(5)).until(() -> calls.stream().skip(1)
                        .allMatch(t -> t.getState() == Thread.State.WAITING));
            }
            for (Thread call : calls) {
                call.join(10_000);
            }

            // Then they are claimed in one more round trip, not three
            assertThat(meters.get("idem.claim").timer().count()).as("claim round trips").isEqualTo(2);
            // And every key ran once, the copy too
            for (String key : List.of("a-1", "a-2", "a-3", "b-1", "b-2", "c-1", "c-2", "d-1", "copy")) {
                assertThat(runs.get(key)).as("runs of " + key).hasValue(1);
            }
            // And each group's completion is sent once its last call has finished
            await().atMost(Duration.ofSeconds(5)).until(() -> state("d-1") == ClaimRecord.State.DONE
                    && state("a-1") == ClaimRecord.State.DONE && state("copy") == ClaimRecord.State.DONE);
        }
    }

    @Test
    void aCallThatStopsEarlyReleasesTheMessagesItNeverStartedWhileItsGroupRuns() throws Exception {
        try (IdempotentProcessor<byte[]> processor = processor()) {
            IdemConcurrentlyListener<byte[]> listener = IdemConcurrentlyListener.of(processor, DelayLevels.defaults(),
                    Duration.ZERO);
            // Given two calls claimed together: one runs a long handler, the other fails at its first message
            List<Thread> group = claimedTogether(listener, List.of("slow-1"), List.of("bad-1", "never-started"));
            Thread slow = group.get(0);
            Thread stopping = group.get(1);
            // When the failing call has returned (its later message goes back to the broker)
            stopping.join(10_000);
            assertThat(slowRuns.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(runs).doesNotContainKey("never-started");
            // Then the message it never started is free for its redelivery while the group still runs
            assertThat(state("never-started")).isNotEqualTo(ClaimRecord.State.CLAIMED);
            assertThat(store.claim(List.of(new ClaimRequest(key("never-started"), 0)), "another-instance",
                    Duration.ofSeconds(30)).get(0)).isInstanceOf(Claim.Claimed.class);
            slowMayEnd.countDown();
            slow.join(10_000);
            await().atMost(Duration.ofSeconds(5)).until(() -> state("slow-1") == ClaimRecord.State.DONE);
            // And the group's close leaves the other instance's claim alone
            assertThat(state("never-started")).isEqualTo(ClaimRecord.State.CLAIMED);
        }
    }

    @Test
    void aConsumerClosingWhileAGroupRunsCompletesWhatTheGroupFinished() throws Exception {
        IdempotentProcessor<byte[]> processor = processor();
        IdemConcurrentlyListener<byte[]> listener = IdemConcurrentlyListener.of(processor, DelayLevels.defaults(),
                Duration.ZERO);
        // Given two calls claimed together: one runs a long handler, the other finishes and returns
        List<Thread> group = claimedTogether(listener, List.of("slow-2"), List.of("quick-1", "quick-2"));
        Thread slow = group.get(0);
        Thread quick = group.get(1);
        quick.join(10_000);
        assertThat(slowRuns.await(10, TimeUnit.SECONDS)).isTrue();
        // When the processor closes while the long handler still runs (it outlived the consumer's grace)
        processor.close();
        // Then what the group finished is recorded as done: a copy elsewhere is not run again
        assertThat(state("quick-1")).isEqualTo(ClaimRecord.State.DONE);
        assertThat(state("quick-2")).isEqualTo(ClaimRecord.State.DONE);
        slowMayEnd.countDown();
        slow.join(10_000);
    }

    /** Two calls that arrive while another call's claim is on its way (the store is held here): one group. */
    private List<Thread> claimedTogether(IdemConcurrentlyListener<byte[]> listener, List<String> one,
                                         List<String> other) {
        synchronized (store) {
            Thread first = call(listener, "first-" + one.get(0));
            await().atMost(Duration.ofSeconds(5)).until(() -> first.getState() == Thread.State.BLOCKED);
            List<Thread> group = List.of(call(listener, one.toArray(String[]::new)),
                    call(listener, other.toArray(String[]::new)));
            await().atMost(Duration.ofSeconds(5)).until(() -> group.stream()
                    .allMatch(t -> t.getState() == Thread.State.WAITING));
            return group;
        }
    }

    private ClaimRecord.State state(String key) {
        return store.inspect(key(key)).map(ClaimRecord::state).orElse(null);
    }

    private static IdempotencyKey key(String value) {
        return new IdempotencyKey("g", "orders", value);
    }

    private static Thread call(IdemConcurrentlyListener<byte[]> listener, String... keys) {
        List<MessageExt> messages = new ArrayList<>();
        for (String key : keys) {
            MessageExt message = new MessageExt();
            message.setTopic("orders");
            message.setQueueId(0);
            message.setQueueOffset(messages.size());
            message.setMsgId("msg-" + key);
            message.setKeys(key);
            message.setBody("{}".getBytes(StandardCharsets.UTF_8));
            messages.add(message);
        }
        Thread call = new Thread(() -> listener.consumeMessage(messages,
                new ConsumeConcurrentlyContext(new MessageQueue("orders", "b", 0))));
        call.start();
        return call;
    }
}
