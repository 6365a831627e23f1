/**
 * JUnit 5 fixtures with real infrastructure for testing Idem and the handlers built on it:
 * annotate a test class with {@link dev.idem.testkit.IdemTestKit} and declare parameters of type
 * {@link dev.idem.testkit.KafkaBroker}, {@link dev.idem.testkit.RocketMqBroker},
 * {@link dev.idem.testkit.RedisEndpoint}, {@link dev.idem.testkit.PostgresDatabase} or
 * {@link dev.idem.testkit.TestNames}. Brokers start once per test JVM, on first use, and are shared.
 */
@NullMarked
package dev.idem.testkit;

import org.jspecify.annotations.NullMarked;
