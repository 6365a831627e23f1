package dev.idem.spring;

import dev.idem.core.Compensation;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Puts Idem around an existing listener: a spring-kafka {@code @KafkaListener} method, or the
 * {@code onMessage} method of a rocketmq-spring {@code @RocketMQMessageListener} bean.
 *
 * <p>spring-kafka, record or batch listeners: each record
 * is claimed, checked, run, retried and dead-lettered by Idem, and the listener's container gets Idem's
 * error handler in place of its own, so spring-kafka never recovers or skips a record behind Idem's
 * back. The {@code @KafkaListener} needs an {@code id} (Idem finds its container by it; it is also the
 * listener's default name). A batch listener is called with one record at a time, each in its own
 * transaction, after one claim for the whole batch.
 *
 * <p>rocketmq-spring: Idem becomes the container's RocketMQ listener (concurrent or orderly), claims
 * each call's messages in one round trip and hands each message it runs to the container (conversion,
 * then {@code onMessage}); dead letters go to {@code <topic>_DLQ}; the listener's default name is
 * {@code <consumerGroup>-<topic>}; a broadcasting listener fails start-up.
 *
 * <p>With a {@code DataSource} in the context the ledger is the business check and the method runs
 * in the ledger row's transaction, as for {@link IdempotentListener}. Start-up fails, naming what to
 * change, for a manual acknowledgment mode, async acknowledgments or a listener without an id.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface Idempotent {

    /** The listener's name in configuration and metrics; default the {@code @KafkaListener}'s id, or {@code <consumerGroup>-<topic>}. */
    String name() default "";

    /** Where the idempotency key comes from: the record key, a header or the record's id (not PROPERTY). */
    KeyFrom keySource() default KeyFrom.MESSAGE_KEY;

    /** For {@link KeyFrom#HEADER}: the header's name. */
    String key() default "";

    /** A suffix appended to the key, e.g. {@code :deduct} when several effects share an id. */
    String keySuffix() default "";

    /** A bean of this type compensates each dead-lettered key once (or an {@link IdempotentCompensation} method). */
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

    /** Whether the application's {@code DataSource} (when there is one) is the business check; see {@link IdempotentListener#ledger()}. */
    boolean ledger() default true;
}
