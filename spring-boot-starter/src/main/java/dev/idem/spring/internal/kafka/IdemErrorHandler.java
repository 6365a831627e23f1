package dev.idem.spring.internal.kafka;

import dev.idem.kafka.PollResult;
import dev.idem.kafka.Redelivery;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RecordDeserializationException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.kafka.listener.CommonErrorHandler;
import org.springframework.kafka.listener.MessageListenerContainer;
import org.springframework.kafka.support.serializer.DeserializationException;

/**
 * The error handler of a container Idem wraps, in place of spring-kafka's: it never recovers or skips a
 * record. For Idem's redeliveries it commits what finished, seeks each partition back to its first
 * record still to run and pauses it for Idem's backoff. A record the container could not deserialize
 * (it never reached the listener) is run through Idem, which dead-letters it with the reason. Anything
 * else is delivered again after a pause. The container commits nothing after this handler.
 */
final class IdemErrorHandler implements CommonErrorHandler {

    private static final Logger LOG = LoggerFactory.getLogger(IdemErrorHandler.class);
    private static final Duration UNEXPECTED_PAUSE = Duration.ofSeconds(1);

    private final String name;
    private final WrappedRecords records;
    private final ScheduledExecutorService resumes;

    IdemErrorHandler(String name, WrappedRecords records) {
        this.name = name;
        this.records = records;
        this.resumes = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "idem-resume-" + name);
            thread.setDaemon(true);
            return thread;
        });
    }

    @Override
    public boolean seeksAfterHandling() {
        return true;
    }

    @Override
    public boolean isAckAfterHandle() {
        return false;
    }

    @Override
    public void handleRemaining(Exception thrown, List<ConsumerRecord<?, ?>> remaining, Consumer<?, ?> consumer,
                                MessageListenerContainer container) {
        ConsumerRecord<?, ?> first = remaining.get(0);
        PollResult result;
        RedeliveryRequested redelivery = cause(thrown, RedeliveryRequested.class);
        if (redelivery != null) {
            result = redelivery.result();
        } else if (cause(thrown, DeserializationException.class) != null) {
            // The container threw before the listener: Idem runs the record, whose defect sends it to the dead letter.
            result = records.process(List.of(first), record -> {
                throw new IllegalStateException("a record that could not be deserialized does not run");
            });
        } else {
            LOG.warn("Idem listener '{}': the container failed outside Idem at {}-{}@{}; delivering again in {}",
                    name, first.topic(), first.partition(), first.offset(), UNEXPECTED_PAUSE, thrown);
            result = again(List.of(first));
        }
        // Only the first record ran; the container drops the rest of the poll, which is sought back to.
        redeliver(result, remaining, List.of(first), consumer, container);
    }

    @Override
    public void handleBatch(Exception thrown, ConsumerRecords<?, ?> data, Consumer<?, ?> consumer,
                            MessageListenerContainer container, Runnable invokeListener) {
        List<ConsumerRecord<?, ?>> all = new java.util.ArrayList<>();
        data.forEach(all::add);
        PollResult result;
        RedeliveryRequested redelivery = cause(thrown, RedeliveryRequested.class);
        if (redelivery != null) {
            result = redelivery.result();
        } else {
            LOG.warn("Idem listener '{}': the batch failed outside Idem; delivering it again in {}", name,
                    UNEXPECTED_PAUSE, thrown);
            result = again(all);
        }
        redeliver(result, all, all, consumer, container);
    }

    /**
     * A record the consumer could not deserialize while polling (no {@code ErrorHandlingDeserializer}):
     * Idem dead-letters it from the bytes the exception carries, and the consumer moves past it.
     */
    @Override
    public void handleOtherException(Exception thrown, Consumer<?, ?> consumer, MessageListenerContainer container,
                                     boolean batchListener) {
        RecordDeserializationException failure = cause(thrown, RecordDeserializationException.class);
        if (failure == null) {
            LOG.error("Idem listener '{}': the container failed outside the listener", name, thrown);
            return;
        }
        TopicPartition partition = failure.topicPartition();
        PollResult result;
        try {
            result = records.processUndecodable(failure);
        } catch (RuntimeException e) {
            LOG.warn("Idem listener '{}': could not dead-letter the undecodable record {}@{}; trying again in {}",
                    name, partition, failure.offset(), UNEXPECTED_PAUSE, e);
            result = again(partition, failure.offset());
        }
        Redelivery redelivery = result.redeliveries().get(partition);
        if (redelivery != null) {
            consumer.seek(partition, failure.offset());
            pause(container, partition, redelivery.delay());
            return;
        }
        consumer.seek(partition, failure.offset() + 1);
        try {
            consumer.commitSync(result.commits());
        } catch (RuntimeException e) {
            LOG.warn("Idem listener '{}': committing past the dead-lettered record failed; it comes back and is "
                    + "found done", name, e);
        }
    }

    /**
     * Commits what finished, seeks each partition Idem redelivers back to its record, and every other
     * partition with a record of the poll that did not run back to the first such record.
     */
    private void redeliver(PollResult result, List<ConsumerRecord<?, ?>> records, List<ConsumerRecord<?, ?>> ran,
                           Consumer<?, ?> consumer, MessageListenerContainer container) {
        Map<TopicPartition, Long> seeks = new LinkedHashMap<>();
        result.redeliveries().forEach((partition, redelivery) -> seeks.put(partition, redelivery.offset()));
        java.util.Set<ConsumerRecord<?, ?>> done = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        done.addAll(ran);
        for (ConsumerRecord<?, ?> record : records) {
            if (!done.contains(record)) {
                seeks.putIfAbsent(new TopicPartition(record.topic(), record.partition()), record.offset());
            }
        }
        // Seeks first: a commit that fails (coordinator away, rebalance) must not leave the position
        // past records that did not run.
        seeks.forEach(consumer::seek);
        result.redeliveries().forEach((partition, redelivery) -> pause(container, partition, redelivery.delay()));
        if (!result.commits().isEmpty()) {
            try {
                consumer.commitSync(result.commits());
            } catch (RuntimeException e) {
                LOG.warn("Idem listener '{}': committing finished records failed; they come back and are found "
                        + "done", name, e);
            }
        }
    }

    private static PollResult again(TopicPartition partition, long offset) {
        return new PollResult(Map.of(), Map.of(partition, new Redelivery(offset, UNEXPECTED_PAUSE)), List.of());
    }

    private static PollResult again(List<ConsumerRecord<?, ?>> records) {
        Map<TopicPartition, Redelivery> redeliveries = new LinkedHashMap<>();
        for (ConsumerRecord<?, ?> record : records) {
            redeliveries.putIfAbsent(new TopicPartition(record.topic(), record.partition()),
                    new Redelivery(record.offset(), UNEXPECTED_PAUSE));
        }
        return new PollResult(Map.of(), redeliveries, List.of());
    }

    private void pause(MessageListenerContainer container, TopicPartition partition, Duration delay) {
        if (delay.isZero() || delay.isNegative()) {
            return;
        }
        // Pause first: a resume that ran before it (a delay of a few ms) would leave the partition paused.
        container.pausePartition(partition);
        try {
            resumes.schedule(() -> container.resumePartition(partition), delay.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            container.resumePartition(partition); // closing: back without the pause rather than paused for good
        }
    }

    /** {@code type} in the cause chain (spring-kafka wraps what the listener threw), or null. */
    private static <E extends Throwable> @Nullable E cause(Throwable thrown, Class<E> type) {
        for (Throwable t = thrown; t != null; t = t.getCause()) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
        }
        return null;
    }

    /** Stops the resume timer; paused partitions stay paused until the container stops. */
    void close() {
        resumes.shutdownNow();
    }
}
