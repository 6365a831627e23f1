package dev.idem.spring;

import dev.idem.core.Compensation;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes a Spring bean method an idempotent listener: Idem consumes {@link #topic()} as {@link #group()}
 * on {@link #broker()}, decodes each message into the method's payload parameter, and calls the
 * method once per business key (claim in Redis, business check, retries, dead letter, compensation).
 * The method takes the payload and, optionally, a {@link dev.idem.core.Delivery} (key, attempt,
 * envelope with headers and the native record). With a {@code DataSource} in the context the method
 * runs in a Spring transaction that also writes the ledger row: a {@code @Transactional} method and
 * its {@code JdbcTemplate} (or JPA on the same {@code DataSource}) commit or roll back with it. Found
 * when the context has refreshed, started then, stopped in order when it closes.
 *
 * <p>Attributes take placeholders ({@code topic = "${app.orders-topic}"}); every policy value can be
 * overridden under {@code idem.listeners.<name>.*}.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface IdempotentListener {

    /** The listener's name in configuration and metrics; default {@code <group>-<topic>}. Unique. */
    String name() default "";

    /** The topic to consume. */
    String topic();

    /** The consumer group (a share group for {@link Broker#KAFKA_SHARE}); Idem's keys are namespaced by it. */
    String group();

    /** The broker. */
    Broker broker() default Broker.KAFKA;

    /** Where the idempotency key comes from. */
    KeyFrom keySource() default KeyFrom.PROPERTY;

    /**
     * For {@link KeyFrom#PROPERTY}: the payload's property (a dotted path through record components,
     * getters or fields, e.g. {@code id} or {@code order.id}); for {@link KeyFrom#HEADER}: the header name.
     */
    String key() default "";

    /** A suffix appended to the key, e.g. {@code :deduct} when several effects share an id. */
    String keySuffix() default "";

    /**
     * A bean of this type is the listener's compensation, run once per dead-lettered key. Default:
     * none (or a method marked {@link IdempotentCompensation} for this listener).
     */
    Class<? extends Compensation> compensation() default Compensation.class;

    /** Handler attempts before the dead letter; 0 takes Idem's default (5). */
    int maxAttempts() default 0;

    /**
     * The claim's lease, as a duration ({@code 30s}); longer than the slowest handler pause. Empty takes
     * Idem's default (30 s).
     */
    String lease() default "";

    /** The dead-letter topic; default {@code <topic>.DLT} (Kafka), {@code <topic>_DLQ} (RocketMQ). */
    String deadLetterTopic() default "";

    /** Work at once (Kafka: partitions, 1; share group: records, 1; RocketMQ: threads, 20). 0 takes the default. */
    int concurrency() default 0;

    /**
     * Whether the application's {@code DataSource} (when there is one) is the business check: the
     * method then runs in a transaction that also writes the ledger row ({@code idem.ledger.*}).
     * False: Redis-only mode (no business check).
     */
    boolean ledger() default true;
}
