/**
 * Idem for Spring Boot: {@link dev.idem.spring.IdempotentListener} bean methods on Kafka, Kafka share
 * groups and RocketMQ, configured under {@code idem.*} ({@link dev.idem.spring.IdemProperties}),
 * the ledger in Spring's transaction, ordered start and stop, health and metrics. Nothing here is
 * null unless marked {@code @Nullable}.
 */
@NullMarked
package dev.idem.spring;

import org.jspecify.annotations.NullMarked;
