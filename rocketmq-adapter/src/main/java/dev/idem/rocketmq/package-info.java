/**
 * The RocketMQ adapter: decorates existing RocketMQ listeners so that each message's effect runs
 * through Idem's processor, and maps its outcomes onto consume statuses.
 */
package dev.idem.rocketmq;
