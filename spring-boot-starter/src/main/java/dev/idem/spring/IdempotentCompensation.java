package dev.idem.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes a Spring bean method the compensation of the {@link IdempotentListener} named by
 * {@link #value()}: called with the {@link dev.idem.core.DeadLetter} once its message is
 * dead-lettered (recorded once; a crash between the hook and its record runs it again, so make it
 * idempotent on {@code deadLetter.compensationId()}).
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface IdempotentCompensation {

    /** The listener's name ({@code <group>-<topic>} unless the listener names itself). */
    String value();
}
