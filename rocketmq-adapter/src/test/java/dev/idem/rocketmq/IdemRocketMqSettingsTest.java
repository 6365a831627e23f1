package dev.idem.rocketmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.ConsumerState;
import dev.idem.core.DedupCheck;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.core.spi.DeadLetterPublisher;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.core.memory.InMemoryClaimStore;
import dev.idem.rocketmq.internal.InstanceNames;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.protocol.heartbeat.MessageModel;
import org.junit.jupiter.api.Test;

class IdemRocketMqSettingsTest {

    private static final MessageListenerConcurrently LISTENER = (messages, context) ->
            ConsumeConcurrentlyStatus.CONSUME_SUCCESS;

    private static DefaultMQPushConsumer consumer(int maxReconsumeTimes) {
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("inventory");
        consumer.setNamesrvAddr("127.0.0.1:1");
        consumer.setMaxReconsumeTimes(maxReconsumeTimes);
        return consumer;
    }

    private static Consumer<IdempotentProcessor.Builder<byte[]>> guarded(DedupCheck<Object> check) {
        return processor -> processor.claims(InMemoryClaimStore.create()).dedupCheck(check).keys(KeySource.messageKey());
    }

    @Test
    void aConsumerThatWouldDeadLetterBeforeIdemIsRefusedNamingTheSetting() {
        assertThatThrownBy(() -> PushConsumerRules.requireReconsumeHeadroom(consumer(3), false, 5))
                .hasMessageStartingWith("maxReconsumeTimes of consumer group inventory must be >= maxAttempts + 32 = 37"
                        + " but was 3")
                .hasMessageContaining("consumer.setMaxReconsumeTimes(37)");
    }

    @Test
    void theClientsDefaultReconsumeTimesIsRefusedSayingWhatToRaise() {
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("inventory");

        assertThatThrownBy(() -> IdemRocketMq.wrapConcurrently(consumer, LISTENER, guarded(d -> false)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("but was -1 (the client's default, 16)")
                .hasMessageContaining("consumer.setMaxReconsumeTimes(37)");
        PushConsumerRules.requireReconsumeHeadroom(consumer, true, 5);
        PushConsumerRules.requireReconsumeHeadroom(consumer(37), false, 5);
    }

    @Test
    void aBroadcastingConsumerIsRefusedBecauseTheClientDropsRedeliveries() {
        DefaultMQPushConsumer consumer = consumer(37);
        consumer.setMessageModel(MessageModel.BROADCASTING);

        assertThatThrownBy(() -> IdemRocketMq.wrapConcurrently(consumer, LISTENER, guarded(d -> false)))
                .hasMessageStartingWith("messageModel of consumer group inventory must be CLUSTERING but was BROADCASTING");
    }

    @Test
    void aProcessorGroupOtherThanTheConsumersIsRefusedOnWrappingNamingBoth() {
        assertThatThrownBy(() -> IdemRocketMq.wrapConcurrently(consumer(37), LISTENER,
                guarded(d -> false).andThen(processor -> processor.group("billing"))))
                .hasMessageStartingWith("the processor's group 'billing' differs from the consumer's group 'inventory'");
    }

    @Test
    void theJdbcLedgerAroundAWrappedListenerIsRefusedSayingWhatToUseInstead() {
        JdbcEffectLedger ledger = JdbcEffectLedger.builder(dev.idem.core.jdbc.LedgerFixture.dataSource(
                "jdbc:h2:mem:wrapped-" + System.nanoTime() + ";DB_CLOSE_DELAY=-1", "", "")).createTable(true).build();

        assertThatThrownBy(() -> IdemRocketMq.wrapConcurrently(consumer(37), LISTENER, guarded(ledger)))
                .hasMessageStartingWith("dedupCheck must not be a ledger whose rows the handler cannot write (the JDBC ledger) for a wrapped listener")
                .hasMessageContaining("the adapter's consumer with a processor built by ledger.processor(...)");
    }

    @Test
    void lambdaListenersCompileThroughBothEntryPointsWithIdemInFront() {
        DefaultMQPushConsumer concurrent = consumer(37);
        DefaultMQPushConsumer orderly = consumer(-1);

        try (IdemRocketMq.Idem first = IdemRocketMq.wrapConcurrently(concurrent,
                     (messages, context) -> ConsumeConcurrentlyStatus.CONSUME_SUCCESS, guarded(d -> false));
             IdemRocketMq.Idem second = IdemRocketMq.wrapOrderly(orderly,
                     (messages, context) -> ConsumeOrderlyStatus.SUCCESS, guarded(d -> false))) {
            assertThat(concurrent.getMessageListener()).isInstanceOf(IdemConcurrentlyListener.class);
            assertThat(orderly.getMessageListener()).isInstanceOf(IdemOrderlyListener.class);
        }
    }

    @Test
    void aProcessorGroupOtherThanTheConsumersIsRefusedOnBuildNotOverwritten() {
        IdempotentProcessor.Builder<byte[]> processor = IdempotentProcessor.<byte[]>builder(delivery -> { })
                .group("billing");
        guarded(d -> false).accept(processor);

        assertThatThrownBy(() -> IdemRocketMqConsumer.builder("127.0.0.1:1", "inventory", processor)
                .subscribe("orders", "*").build())
                .hasMessageStartingWith("the processor's group 'billing' differs from the consumer's group 'inventory'");
    }

    @Test
    void aDeadLetterDecoratorWrapsIdemsRocketMqPublisher() {
        IdempotentProcessor.Builder<byte[]> processor = IdempotentProcessor.<byte[]>builder(delivery -> { })
                .codec(PayloadCodec.bytes());
        guarded(d -> false).accept(processor);
        List<DeadLetterPublisher> decorated = new ArrayList<>();

        IdemRocketMqConsumer<byte[]> consumer = IdemRocketMqConsumer.builder("127.0.0.1:1", "inventory", processor)
                .subscribe("orders", "*").deadLetters(publisher -> {
                    decorated.add(publisher);
                    return publisher;
                }).build();
        consumer.close();

        assertThat(decorated).singleElement().isInstanceOf(RocketMqDeadLetterPublisher.class);
    }

    @Test
    void aDeadLetterDecoratorWrapsTheProcessorsOwnPublisherTooAndTheUsersBuilderIsLeftAsItWas() {
        // Given a processor with a publisher of its own and no group, given to two consumers in turn
        DeadLetterPublisher own = letter -> { };
        IdempotentProcessor.Builder<byte[]> processor = IdempotentProcessor.<byte[]>builder(delivery -> { })
                .codec(PayloadCodec.bytes()).deadLetters(own);
        guarded(d -> false).accept(processor);
        List<DeadLetterPublisher> decorated = new ArrayList<>();

        for (String group : List.of("inventory", "billing")) {
            IdemRocketMqConsumer.builder("127.0.0.1:1", group, processor).subscribe("orders", "*")
                    .deadLetters(publisher -> {
                        decorated.add(publisher);
                        return publisher;
                    }).build().close();
        }

        // Then the decorator wrapped the user's publisher both times, and each consumer took its own
        // group: the first one's was not written into the user's builder
        assertThat(decorated).containsExactly(own, own);
    }

    @Test
    void everyConsumerInstanceNameIsDistinctAndCarriesTheProcessId() {
        Set<String> names = new HashSet<>();
        for (int i = 0; i < 1_000; i++) {
            names.add(InstanceNames.next("inventory"));
        }

        assertThat(names).hasSize(1_000)
                .allMatch(name -> name.startsWith("inventory-" + ProcessHandle.current().pid() + "-"));
    }

    @Test
    void aClientListedTwiceByTheBrokerStillLeavesEveryQueueExactlyOneConsumer() {
        // The broker lists a client once per connection. A client paused for longer than its request
        // timeouts reconnects, and its old connection is listed until the broker expires it (120 s):
        // the soak saw 3 of 12 queues consumed by nobody for those two minutes.
        IdempotentProcessor.Builder<byte[]> processor = IdempotentProcessor.<byte[]>builder(delivery -> { })
                .codec(PayloadCodec.bytes());
        guarded(d -> false).accept(processor);
        IdemRocketMqConsumer<byte[]> consumer = IdemRocketMqConsumer.builder("127.0.0.1:1", "inventory", processor)
                .subscribe("orders", "*").build();
        List<MessageQueue> queues = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            queues.add(new MessageQueue("orders", "broker-a", i));
        }
        // Sorted, as the client sorts the list before allocating.
        List<String> listed = List.of("10.0.0.1@a", "10.0.0.1@a", "10.0.0.1@b", "10.0.0.1@c");

        Map<MessageQueue, List<String>> owners = new HashMap<>();
        for (String client : new LinkedHashSet<>(listed)) {
            consumer.consumer().getAllocateMessageQueueStrategy().allocate("inventory", client, queues, listed)
                    .forEach(queue -> owners.computeIfAbsent(queue, q -> new ArrayList<>()).add(client));
        }
        assertThat(consumer.state()).as("built, not started").isEqualTo(ConsumerState.NEW);
        consumer.close();

        assertThat(owners).as("queues with a consumer").hasSize(queues.size());
        assertThat(owners.values()).as("consumers per queue").allSatisfy(clients -> assertThat(clients).hasSize(1));
    }

    @Test
    void backoffsMapOntoTheShortestDelayLevelThatCoversThem() {
        DelayLevels levels = DelayLevels.defaults();

        assertThat(levels.levelFor(Duration.ZERO)).isEqualTo(1);
        assertThat(levels.levelFor(Duration.ofSeconds(1))).isEqualTo(1);
        assertThat(levels.levelFor(Duration.ofSeconds(2))).isEqualTo(2);
        assertThat(levels.levelFor(Duration.ofSeconds(45))).isEqualTo(5);
        assertThat(levels.levelFor(Duration.ofDays(1))).isEqualTo(18);
        assertThatThrownBy(() -> DelayLevels.parse("1s 5x")).hasMessageContaining("'5x'");
    }
}
