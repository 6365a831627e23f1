/** Compile-time checks of Idem's Micronaut annotations: a wrong listener fails the build, not the start. */
@NullMarked
package dev.idem.micronaut.processor;

import org.jspecify.annotations.NullMarked;
