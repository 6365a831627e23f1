/**
 * How the test kit's fixtures are started: in-process Kafka and RocketMQ brokers, a running or
 * embedded Redis, a running PostgreSQL, or all of them from Testcontainers. Not public API.
 */
@NullMarked
package dev.idem.testkit.internal;

import org.jspecify.annotations.NullMarked;
