/** Mapping between RocketMQ messages and Idem's envelopes and delays. Not public API. */
package dev.idem.rocketmq.internal;
