/** How the starter finds, resolves, calls and runs listener methods. Not public API. */
@NullMarked
package dev.idem.spring.internal;

import org.jspecify.annotations.NullMarked;
