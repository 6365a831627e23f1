package dev.idem.micronaut;

import io.micronaut.context.annotation.Executable;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a bean method as the compensation of the listener named {@link #value()}: it takes a
 * {@link dev.idem.core.DeadLetter} and runs once per dead-lettered key of that listener.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
@Executable(processOnStartup = true)
public @interface IdempotentCompensation {

    /** The listener's name ({@link IdempotentListener#name()}, or its default {@code <group>-<topic>}). */
    String value();
}
