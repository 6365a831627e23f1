package dev.idem.spring.internal.kafka;

import dev.idem.kafka.PollResult;
import java.util.List;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.jspecify.annotations.Nullable;
import org.springframework.kafka.listener.AcknowledgingConsumerAwareMessageListener;
import org.springframework.kafka.listener.MessageListener;
import org.springframework.kafka.listener.adapter.AbstractDelegatingMessageListenerAdapter;
import org.springframework.kafka.support.Acknowledgment;

/**
 * A record listener's container calls this in place of the listener: Idem runs the record, calling the
 * listener when the record is to run; a redelivery is thrown to {@link IdemErrorHandler}.
 *
 * @param <K> key type
 * @param <V> value type
 */
final class IdemRecordListener<K, V> extends AbstractDelegatingMessageListenerAdapter<MessageListener<K, V>>
        implements AcknowledgingConsumerAwareMessageListener<K, V> {

    private final String name;
    private final WrappedRecords records;

    IdemRecordListener(MessageListener<K, V> delegate, String name, WrappedRecords records) {
        super(delegate);
        this.name = name;
        this.records = records;
    }

    @Override
    @SuppressWarnings("unchecked")
    public void onMessage(ConsumerRecord<K, V> record, @Nullable Acknowledgment acknowledgment,
                          @Nullable Consumer<?, ?> consumer) {
        PollResult result = records.process(List.of(record),
                run -> deliver((ConsumerRecord<K, V>) run, acknowledgment, consumer));
        if (!result.redeliveries().isEmpty()) {
            throw new RedeliveryRequested(name, result);
        }
    }

    private void deliver(ConsumerRecord<K, V> record, @Nullable Acknowledgment acknowledgment,
                         @Nullable Consumer<?, ?> consumer) {
        switch (delegateType) {
            case ACKNOWLEDGING_CONSUMER_AWARE -> delegate.onMessage(record, acknowledgment, consumer);
            case ACKNOWLEDGING -> delegate.onMessage(record, acknowledgment);
            case CONSUMER_AWARE -> delegate.onMessage(record, consumer);
            case SIMPLE -> delegate.onMessage(record);
        }
    }

    @Override
    public void onMessage(ConsumerRecord<K, V> data) {
        onMessage(data, null, null);
    }

    @Override
    public void onMessage(ConsumerRecord<K, V> data, @Nullable Acknowledgment acknowledgment) {
        onMessage(data, acknowledgment, null);
    }

    @Override
    public void onMessage(ConsumerRecord<K, V> data, @Nullable Consumer<?, ?> consumer) {
        onMessage(data, null, consumer);
    }
}
