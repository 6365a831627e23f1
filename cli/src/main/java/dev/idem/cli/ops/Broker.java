package dev.idem.cli.ops;

/** The brokers whose dead-letter topics the command reads. */
public enum Broker {
    KAFKA, ROCKETMQ
}
