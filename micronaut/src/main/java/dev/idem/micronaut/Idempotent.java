package dev.idem.micronaut;

import io.micronaut.aop.Around;
import io.micronaut.context.annotation.Executable;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Puts Idem in front of an existing micronaut-kafka {@code @KafkaListener} method (around advice):
 * each record is claimed, checked, run, retried and dead-lettered by Idem, not by micronaut-kafka.
 * The method must declare the {@code ConsumerRecord} (micronaut-kafka binds it), and its listener
 * must be {@code @KafkaListener(groupId = ..., errorStrategy = @ErrorStrategy(value = RETRY_ON_ERROR,
 * retryCount = Integer.MAX_VALUE))}: Idem then asks for a redelivery by throwing, and
 * micronaut-kafka seeks back and delivers the record again, never committing past it. Start-up
 * fails naming what is missing. The class must not be final (Micronaut subclasses it).
 *
 * <p>The business check is your own {@link dev.idem.core.DedupCheck} bean named by
 * {@link #dedupCheck()} (the listener's own writes must be what it reads), or Redis-only mode.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
@Around
@Executable(processOnStartup = true)
public @interface Idempotent {

    /**
     * The listener's name: default {@code <groupId>-<topic>}. Configuration overrides the annotation
     * by it: {@code idem.listeners.<name>.max-attempts}, {@code lease} and {@code dead-letter-topic}.
     */
    String name() default "";

    /** Where the idempotency key comes from. */
    KeyFrom keySource() default KeyFrom.MESSAGE_KEY;

    /** For {@link KeyFrom#PROPERTY}: the record value's property; for {@link KeyFrom#HEADER}: the header. */
    String key() default "";

    /** Handler attempts before the dead letter; 0 takes Idem's default (5). */
    int maxAttempts() default 0;

    /** The claim's lease ({@code 30s}); empty takes Idem's default (30 s). */
    String lease() default "";

    /** The dead-letter topic; default {@code <topic>.DLT}. */
    String deadLetterTopic() default "";

    /** A bean of this type compensates each dead-lettered key once. */
    Class<? extends dev.idem.core.Compensation> compensation() default dev.idem.core.Compensation.class;

    /**
     * A bean of this type is the business check (it must read what the listener writes). Default:
     * none, Redis-only mode.
     */
    Class<? extends dev.idem.core.DedupCheck> dedupCheck() default dev.idem.core.DedupCheck.class;
}
