package dev.idem.listener;

import dev.idem.core.outbox.JdbcOutbox;
import dev.idem.core.outbox.OutboxPublisher;
import dev.idem.core.outbox.OutboxRelay;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The outbox an integration runs from {@code idem.outbox.*}, the one way for Spring Boot and
 * Micronaut: the table, and unless the relay is off, the chosen broker's publisher and the relay,
 * started. Closing stops the relay (unpublished rows wait in the table) and then its publisher.
 * Thread-safe.
 */
public final class OutboxRuntime implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(OutboxRuntime.class);

    private final JdbcOutbox outbox;
    private final @Nullable OutboxRelay relay;
    private final @Nullable OutboxPublisher publisher;
    private final OutboxSettings settings;

    private OutboxRuntime(JdbcOutbox outbox, @Nullable OutboxRelay relay, @Nullable OutboxPublisher publisher,
                          OutboxSettings settings) {
        this.outbox = outbox;
        this.relay = relay;
        this.publisher = publisher;
        this.settings = settings;
    }

    /**
     * Builds the outbox on {@code dataSource} and starts its relay.
     *
     * @param kafka      the Kafka client's settings, asked for only when the broker is Kafka (the
     *                   framework's supplier fails naming its setting when they lack the servers)
     * @param nameServer RocketMQ's name server, asked for only when the broker is RocketMQ
     * @param relayMore  what the framework adds to the relay's builder (its meter registry)
     * @throws IllegalArgumentException naming the {@code idem.outbox} setting that is wrong, or the
     *                                  table when it cannot be read
     */
    public static OutboxRuntime start(DataSource dataSource, OutboxSettings settings,
                                      Supplier<Map<String, Object>> kafka, Supplier<String> nameServer,
                                      Consumer<OutboxRelay.Builder> relayMore) {
        JdbcOutbox outbox;
        try {
            outbox = JdbcOutbox.builder(dataSource).table(settings.table()).createTable(settings.createTable()).build();
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw new IllegalArgumentException("idem.outbox.table, create-table: " + e.getMessage(), e);
        }
        if (!settings.relay()) {
            LOG.info("Idem's outbox {} has no relay here (idem.outbox.relay=false): another process or Debezium "
                    + "publishes it", outbox.table());
            return new OutboxRuntime(outbox, null, null, settings);
        }
        ListenerBroker broker = settings.chosenBroker();
        OutboxPublisher publisher = broker == ListenerBroker.KAFKA
                ? dev.idem.kafka.KafkaOutboxPublisher.builder(kafka.get()).build()
                : dev.idem.rocketmq.RocketMqOutboxPublisher.builder(nameServer.get()).build();
        OutboxRelay relay;
        try {
            OutboxRelay.Builder builder = outbox.relay(publisher).pollInterval(settings.pollInterval())
                    .batchSize(settings.batchSize()).keepSent(settings.keepSent()).maxBackoff(settings.maxBackoff());
            relayMore.accept(builder);
            relay = builder.build();
        } catch (IllegalArgumentException e) {
            publisher.close();
            throw new IllegalArgumentException("idem.outbox (poll-interval, batch-size, keep-sent, max-backoff): "
                    + e.getMessage(), e);
        } catch (RuntimeException | Error e) {
            publisher.close();   // its producer's threads would outlive the failed start-up
            throw e;
        }
        relay.start();
        LOG.info("Idem's outbox {} is published to {} by a relay in this process", outbox.table(), broker.display());
        return new OutboxRuntime(outbox, relay, publisher, settings);
    }

    /** The outbox table. */
    public JdbcOutbox outbox() {
        return outbox;
    }

    /** The relay, unless {@code idem.outbox.relay} is false. */
    public Optional<OutboxRelay> relay() {
        return Optional.ofNullable(relay);
    }

    /**
     * The outbox's health: the relay's ({@link OutboxRelay#health}, with {@code idem.outbox.stuck-after}),
     * or up with no relay here.
     */
    public OutboxRelay.Health health() {
        return relay == null ? new OutboxRelay.Health(true, "no relay in this process (idem.outbox.relay=false)")
                : relay.health(settings.stuckAfter());
    }

    @Override
    public void close() {
        if (relay != null) {
            relay.close();
        }
        if (publisher != null) {
            publisher.close();
        }
    }
}
