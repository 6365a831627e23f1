/**
 * The RocketMQ adapter: decorates existing RocketMQ listeners so that each message's effect runs
 * through Idem's processor, and maps its outcomes onto consume statuses.
 */
@NullMarked
package dev.idem.rocketmq;

import org.jspecify.annotations.NullMarked;
