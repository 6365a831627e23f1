/**
 * An in-memory {@link dev.idem.core.spi.ClaimStore} for unit tests of handlers and of Idem's own
 * processing logic. It has the Redis store's semantics, in one JVM.
 */
@NullMarked
package dev.idem.core.memory;

import org.jspecify.annotations.NullMarked;
