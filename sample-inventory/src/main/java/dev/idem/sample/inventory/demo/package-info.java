/**
 * The one-command demo ({@link dev.idem.sample.inventory.demo.Demo}): starts what is not configured
 * (the test kit's in-process Kafka and RocketMQ, Redis, PostgreSQL or else H2), runs two instances
 * of the inventory service as child JVMs, sends every order three times with poison orders and
 * transient failures, kills one instance and starts it again, then checks the stock and prints a
 * report, and ends with the {@code idem} command line on the dead letters.
 */
package dev.idem.sample.inventory.demo;
