/**
 * The RocketMQ adapter's machinery, not public API: messages to envelopes, stalling on deferrals, the gate and the ordered close, instance names, the queue allocation that
 * counts each client once, and the copy of a consumer's client settings.
 */
@NullMarked
package dev.idem.rocketmq.internal;

import org.jspecify.annotations.NullMarked;
