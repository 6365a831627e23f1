/** Idem for Micronaut: {@code @IdempotentListener} bean methods, {@code @Idempotent} around micronaut-kafka listeners, health and the listener registry. */
@NullMarked
package dev.idem.micronaut;

import org.jspecify.annotations.NullMarked;
