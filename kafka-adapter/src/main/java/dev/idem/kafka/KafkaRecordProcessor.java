package dev.idem.kafka;

import dev.idem.core.ProcessorComposer;
import dev.idem.core.DeadLetterRouting;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.spi.DeadLetterPublisher;
import dev.idem.kafka.internal.ConsumerSettings;
import dev.idem.kafka.internal.KafkaProcessors;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;
import org.apache.kafka.clients.consumer.ConsumerRecords;

/**
 * Runs one poll's records through Idem, for poll loops you write yourself. All keys are claimed in
 * one round trip; each partition is processed in offset order, and stops at the first record that
 * must be redelivered, so partition order holds; the {@link PollResult} says what to commit and
 * where to seek back. Your consumer must read bytes ({@code ByteArrayDeserializer} for keys and
 * values) with {@code enable.auto.commit=false}.
 *
 * <pre>{@code
 * KafkaRecordProcessor<Order> idem = KafkaRecordProcessor.builder(consumerSettings, processorBuilder).build();
 * PollResult result = idem.process(consumer.poll(timeout));
 * consumer.commitSync(result.commits());
 * result.redeliveries().forEach((partition, r) -> {
 *     consumer.seek(partition, r.offset());
 *     consumer.pause(List.of(partition));   // resume after r.delay()
 * });
 * ...
 * consumer.close();
 * idem.close();                             // after the consumer: lease renewal, then the dead-letter producer
 * }</pre>
 *
 * <p>Thread-safe. Partitions run in parallel on the builder's executor, one task per partition.
 * Processing a poll takes as long as its handlers: keep {@code max.poll.records} times your slowest
 * handler below {@code max.poll.interval.ms}, or use {@link IdemKafkaConsumer}, which polls while
 * records run.
 *
 * @param <T> payload type
 */
public final class KafkaRecordProcessor<T> implements AutoCloseable {

    private final ProcessorComposer.Composed<T> composed;
    private final IdempotentProcessor<T> processor;
    private final Executor executor;

    private KafkaRecordProcessor(ProcessorComposer.Composed<T> composed, Executor executor) {
        this.composed = Objects.requireNonNull(composed, "composed");
        this.processor = composed.processor();
        this.executor = Objects.requireNonNull(executor, "executor");
    }

    /**
     * A builder over your consumer's settings (at least {@code bootstrap.servers} and
     * {@code group.id}) and a processor builder: the processor's group is taken from
     * {@code group.id} and its dead letters go to {@code <topic>.DLT} unless you set your own.
     */
    public static <T> Builder<T> builder(Map<String, Object> config, IdempotentProcessor.Builder<T> processor) {
        return new Builder<>(config, processor);
    }

    /** Processes every record of the poll. */
    public PollResult process(ConsumerRecords<byte[], byte[]> records) {
        return process(records, () -> false);
    }

    /**
     * Processes the poll's records, stopping each partition before its next record once
     * {@code stop} answers true; stopped records are released unprocessed and not committed. A
     * throwable that escapes Idem's processing for one record (a handler's {@link StackOverflowError},
     * say) is that record's failure: its partition is redelivered from it after the lease.
     *
     * @throws Error a JVM error (out of memory, say): the batch is then abandoned as a crashed
     *               process would leave it
     */
    public PollResult process(ConsumerRecords<byte[], byte[]> records, BooleanSupplier stop) {
        PollJob<T> job = new PollJob<>(processor, records, executor, stop, failure -> { });
        job.run();
        return job.result();
    }

    /**
     * Stops lease renewal and closes the dead-letter producer this processor created; call it after
     * your consumer's last commit.
     */
    @Override
    public void close() {
        composed.close();
    }

    /**
     * Builds a {@link KafkaRecordProcessor}; {@link #build()} validates and fails naming the
     * setting. Not thread-safe.
     *
     * @param <T> payload type
     */
    public static final class Builder<T> {

        private final Map<String, Object> config;
        private final IdempotentProcessor.Builder<T> processor;
        private Executor executor = Runnable::run;
        private UnaryOperator<DeadLetterPublisher> deadLetters = UnaryOperator.identity();
        private DeadLetterRouting deadLetterRouting = DeadLetterRouting.KAFKA_DEFAULT;

        private Builder(Map<String, Object> config, IdempotentProcessor.Builder<T> processor) {
            this.config = new HashMap<>(Objects.requireNonNull(config, "config"));
            this.processor = Objects.requireNonNull(processor, "processor");
        }

        /** Where partitions run, one task each. Default: one after another on the calling thread. */
        public Builder<T> executor(Executor executor) {
            this.executor = executor;
            return this;
        }

        /**
         * Wraps the dead-letter publisher (the one set on the processor builder, or else Idem's
         * {@code <topic>.DLT} publisher), e.g. to count or log dead letters. Default: as it is.
         */
        public Builder<T> deadLetters(UnaryOperator<DeadLetterPublisher> decorator) {
            this.deadLetters = decorator;
            return this;
        }

        /**
         * Where Idem's own dead-letter publisher sends dead letters. Default {@code <topic>.DLT}. Not
         * used when the processor builder has a publisher of its own.
         */
        public Builder<T> deadLetterRouting(DeadLetterRouting routing) {
            this.deadLetterRouting = Objects.requireNonNull(routing, "routing");
            return this;
        }

        /** @throws IllegalArgumentException naming the setting that is missing, unknown or wrong */
        public KafkaRecordProcessor<T> build() {
            ConsumerSettings settings = ConsumerSettings.of(config);
            if (executor == null) {
                throw new IllegalArgumentException("executor is required but was not set");
            }
            if (deadLetters == null) {
                throw new IllegalArgumentException("deadLetters decorator is required but was not set");
            }
            ProcessorComposer.Composed<T> composed = KafkaProcessors.composer(config, settings.group(), deadLetters,
                    deadLetterRouting).compose(processor);
            return new KafkaRecordProcessor<>(composed, executor);
        }
    }
}
