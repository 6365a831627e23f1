package dev.idem.listener;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The outbox's settings as both integrations read them from {@code idem.outbox.*}; each default is
 * the core builders' own, stated once here.
 *
 * @param table        {@code idem.outbox.table}: the outbox table
 * @param createTable  {@code idem.outbox.create-table}: create the tables at start-up (development, tests)
 * @param broker       {@code idem.outbox.broker}: {@code kafka} or {@code rocketmq}; null for the only
 *                     broker adapter on the class path
 * @param relay        {@code idem.outbox.relay}: run the embedded relay (false when Debezium publishes the table)
 * @param pollInterval {@code idem.outbox.poll-interval}
 * @param batchSize    {@code idem.outbox.batch-size}
 * @param keepSent     {@code idem.outbox.keep-sent}: zero deletes published rows
 * @param maxBackoff   {@code idem.outbox.max-backoff}
 * @param stuckAfter   {@code idem.outbox.stuck-after}: the health is DOWN once the oldest unsent row is older
 */
public record OutboxSettings(String table, boolean createTable, @Nullable String broker, boolean relay,
                             Duration pollInterval, int batchSize, Duration keepSent, Duration maxBackoff,
                             Duration stuckAfter) {

    public static final String TABLE = "idem_outbox";
    public static final Duration POLL_INTERVAL = Duration.ofMillis(100);
    public static final int BATCH_SIZE = 1_000;
    public static final Duration MAX_BACKOFF = Duration.ofSeconds(10);
    public static final Duration STUCK_AFTER = Duration.ofMinutes(5);

    public OutboxSettings {
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(pollInterval, "pollInterval");
        Objects.requireNonNull(keepSent, "keepSent");
        Objects.requireNonNull(maxBackoff, "maxBackoff");
        Objects.requireNonNull(stuckAfter, "stuckAfter");
    }

    /** Every default: table {@code idem_outbox}, the relay on, the broker the class path has. */
    public static OutboxSettings defaults() {
        return new OutboxSettings(TABLE, false, null, true, POLL_INTERVAL, BATCH_SIZE, Duration.ZERO, MAX_BACKOFF,
                STUCK_AFTER);
    }

    /**
     * The broker the relay publishes to: the one {@code idem.outbox.broker} names, else the only
     * adapter on the class path.
     *
     * @throws IllegalArgumentException naming {@code idem.outbox.broker} when it is not one, or is
     *                                  unset and the class path has both adapters or neither
     */
    public ListenerBroker chosenBroker() {
        boolean kafka = present("dev.idem.kafka.KafkaOutboxPublisher");
        boolean rocketMq = present("dev.idem.rocketmq.RocketMqOutboxPublisher");
        if (broker == null || broker.isBlank()) {
            if (kafka != rocketMq) {
                return kafka ? ListenerBroker.KAFKA : ListenerBroker.ROCKETMQ;
            }
            throw new IllegalArgumentException("idem.outbox.broker is not set and the class path has "
                    + (kafka ? "both idem-kafka-adapter and idem-rocketmq-adapter: set it to kafka or rocketmq"
                    : "no broker adapter: add idem-kafka-adapter or idem-rocketmq-adapter, or set idem.outbox.relay=false"));
        }
        ListenerBroker chosen = switch (broker.trim().toLowerCase(Locale.ROOT)) {
            case "kafka" -> ListenerBroker.KAFKA;
            case "rocketmq" -> ListenerBroker.ROCKETMQ;
            default -> throw new IllegalArgumentException("idem.outbox.broker must be kafka or rocketmq but was '"
                    + broker + "'");
        };
        if (!(chosen == ListenerBroker.KAFKA ? kafka : rocketMq)) {
            throw new IllegalArgumentException("idem.outbox.broker is " + broker + " but idem-"
                    + (chosen == ListenerBroker.KAFKA ? "kafka" : "rocketmq") + "-adapter is not on the class path");
        }
        return chosen;
    }

    private static boolean present(String className) {
        try {
            Class.forName(className, false, OutboxSettings.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }
}
