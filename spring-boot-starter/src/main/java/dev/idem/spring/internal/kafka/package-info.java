/** How the starter puts Idem around spring-kafka listener containers. Not public API; loaded only with spring-kafka. */
@NullMarked
package dev.idem.spring.internal.kafka;

import org.jspecify.annotations.NullMarked;
