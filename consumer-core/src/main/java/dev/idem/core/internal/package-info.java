/**
 * What the processor uses beside its processing order (which is in {@code dev.idem.core}): lease
 * renewal, deferral bookkeeping, failure classification, metrics, tracing and the JSON codec. Not
 * public API.
 */
@NullMarked
package dev.idem.core.internal;

import org.jspecify.annotations.NullMarked;
