/** The Micronaut integration's parts that are not its API: reading properties, starting consumers. */
@NullMarked
package dev.idem.micronaut.internal;

import org.jspecify.annotations.NullMarked;
