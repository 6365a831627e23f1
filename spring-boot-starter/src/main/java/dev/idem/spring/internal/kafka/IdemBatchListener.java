package dev.idem.spring.internal.kafka;

import dev.idem.kafka.PollResult;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;
import org.springframework.kafka.listener.BatchAcknowledgingConsumerAwareMessageListener;
import org.springframework.kafka.listener.BatchMessageListener;
import org.springframework.kafka.listener.adapter.AbstractDelegatingMessageListenerAdapter;
import org.springframework.kafka.support.Acknowledgment;

/**
 * A batch listener's container calls this in place of the listener: Idem claims the whole batch in one
 * round trip, then calls the listener with one record at a time (each its own effect, in its own
 * transaction); partitions with a record to redeliver are thrown to {@link IdemErrorHandler}.
 *
 * @param <K> key type
 * @param <V> value type
 */
final class IdemBatchListener<K, V> extends AbstractDelegatingMessageListenerAdapter<BatchMessageListener<K, V>>
        implements BatchAcknowledgingConsumerAwareMessageListener<K, V> {

    private final String name;
    private final WrappedRecords records;

    IdemBatchListener(BatchMessageListener<K, V> delegate, String name, WrappedRecords records) {
        super(delegate);
        this.name = name;
        this.records = records;
    }

    @Override
    @SuppressWarnings("unchecked")
    public void onMessage(List<ConsumerRecord<K, V>> batch, @Nullable Acknowledgment acknowledgment,
                          @Nullable Consumer<?, ?> consumer) {
        PollResult result = records.process(batch, run -> deliver((ConsumerRecord<K, V>) run, acknowledgment, consumer));
        if (!result.redeliveries().isEmpty()) {
            throw new RedeliveryRequested(name, result);
        }
    }

    // spring-kafka declares the consumer non-null; this passes on what the container gave, as it would.
    @SuppressWarnings({"unchecked", "NullAway"})
    private void deliver(ConsumerRecord<K, V> record, @Nullable Acknowledgment acknowledgment,
                         @Nullable Consumer<?, ?> consumer) {
        if (delegate.wantsPollResult()) {
            delegate.onMessage(new ConsumerRecords<>(Map.of(new TopicPartition(record.topic(), record.partition()),
                    List.of(record)), Map.of()), acknowledgment, (Consumer<K, V>) consumer);
            return;
        }
        List<ConsumerRecord<K, V>> one = List.of(record);
        switch (delegateType) {
            case ACKNOWLEDGING_CONSUMER_AWARE -> delegate.onMessage(one, acknowledgment, consumer);
            case ACKNOWLEDGING -> delegate.onMessage(one, acknowledgment);
            case CONSUMER_AWARE -> delegate.onMessage(one, consumer);
            case SIMPLE -> delegate.onMessage(one);
        }
    }

    /** The container hands this listener a list, whatever the wrapped one takes. */
    @Override
    public boolean wantsPollResult() {
        return false;
    }

    @Override
    public void onMessage(List<ConsumerRecord<K, V>> data) {
        onMessage(data, null, null);
    }

    @Override
    public void onMessage(List<ConsumerRecord<K, V>> data, @Nullable Acknowledgment acknowledgment) {
        onMessage(data, acknowledgment, null);
    }

    @Override
    public void onMessage(List<ConsumerRecord<K, V>> data, @Nullable Consumer<?, ?> consumer) {
        onMessage(data, null, consumer);
    }
}
