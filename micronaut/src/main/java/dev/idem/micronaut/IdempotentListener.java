package dev.idem.micronaut;

import io.micronaut.context.annotation.Executable;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes a bean method an idempotent listener: Idem consumes {@link #topic()} as {@link #group()}
 * on {@link #broker()}, decodes each message into the method's payload parameter with the
 * application's {@code JsonMapper}, and calls the method once per business key (claim in Redis,
 * business check, retries, dead letter, compensation). The method takes the payload and,
 * optionally, a {@link dev.idem.core.Delivery} (key, attempt, fence, envelope with headers and
 * the native record). Found at compile time (an executable method), started when the application
 * context has started, closed in order when it stops.
 *
 * <p>Every policy value can be overridden in configuration under
 * {@code idem.listeners.<name>.*} ({@code max-attempts}, {@code lease}, {@code dead-letter-topic}, {@code close-timeout},
 * {@code concurrency}).
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
@Executable(processOnStartup = true)
public @interface IdempotentListener {

    /** The listener's name in configuration and metrics; default {@code <group>-<topic>}. Unique. */
    String name() default "";

    /** The topic to consume. */
    String topic();

    /** The consumer group; Idem's keys are namespaced by it. */
    String group();

    /** The broker. */
    Broker broker() default Broker.KAFKA;

    /** Where the idempotency key comes from. */
    KeyFrom keySource() default KeyFrom.PROPERTY;

    /**
     * For {@link KeyFrom#PROPERTY}: the payload's property (a dotted path through introspected
     * types, e.g. {@code id} or {@code order.id}); for {@link KeyFrom#HEADER}: the header name.
     */
    String key() default "";

    /** A suffix appended to the key, e.g. {@code :deduct} when several effects share an id. */
    String keySuffix() default "";

    /**
     * A bean of this type is the listener's compensation, run once per dead-lettered key. Default:
     * none (or a method marked {@link IdempotentCompensation} for this listener).
     */
    Class<? extends dev.idem.core.Compensation> compensation() default dev.idem.core.Compensation.class;

    /** Handler attempts before the dead letter; 0 takes Idem's default (5). */
    int maxAttempts() default 0;

    /**
     * The claim's lease, as a duration ({@code 30s}); longer than the slowest handler pause. Empty takes
     * Idem's default (30 s).
     */
    String lease() default "";

    /** The dead-letter topic; default {@code <topic>.DLT} (Kafka), {@code <topic>_DLQ} (RocketMQ). */
    String deadLetterTopic() default "";

    /**
     * Kafka: partitions processed in parallel (default 1); RocketMQ: consume threads (default 20).
     * 0 takes the default.
     */
    int concurrency() default 0;

    /**
     * Whether the application's {@code DataSource} (when there is one) is the business check: the
     * method then runs in a transaction that also writes the ledger row ({@code idem.ledger.*}).
     * False: Redis-only mode (no business check; see the README's "What Idem promises").
     */
    boolean ledger() default true;
}
