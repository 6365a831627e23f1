package dev.idem.sample.inventory.demo;

/**
 * A run's names: topics, consumer group, database schema, Redis key prefix. The demo on its own
 * in-process brokers uses the plain names; a run on shared services (or a test) adds a suffix so
 * runs never see each other's data.
 *
 * @param topic     the {@code order-paid} topic (Kafka and RocketMQ)
 * @param refundTopic the {@code order-refund} topic (Kafka)
 * @param group     the consumer group
 * @param schema    the database schema holding the service's tables and Idem's ledger
 * @param keyPrefix Idem's Redis key prefix
 */
record Names(String topic, String refundTopic, String group, String schema, String keyPrefix) {

    static Names of(String suffix) {
        String dash = suffix.isEmpty() ? "" : "-" + suffix;
        String underscore = suffix.isEmpty() ? "" : "_" + suffix;
        return new Names("order-paid" + dash, "order-refund" + dash, "inventory" + dash,
                "inventory_demo" + underscore, "idem:inventory-demo" + dash + ":");
    }

    String kafkaDeadLetters() {
        return topic + ".DLT";
    }

    String rocketMqDeadLetters() {
        return topic + "_DLQ";
    }
}
