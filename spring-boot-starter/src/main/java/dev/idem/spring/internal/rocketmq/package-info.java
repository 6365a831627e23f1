/** How the starter puts Idem around rocketmq-spring listener containers. Not public API; loaded only with rocketmq-spring. */
@NullMarked
package dev.idem.spring.internal.rocketmq;

import org.jspecify.annotations.NullMarked;
