package dev.idem.listener;

/** The broker a listener consumes from, as the integrations' annotations name it. */
public enum ListenerBroker {
    KAFKA, KAFKA_SHARE, ROCKETMQ;

    /** The client settings a failure of the listener's consumer points to: {@code idem.kafka} or {@code idem.rocketmq}. */
    public String clientSettings() {
        return this == ROCKETMQ ? "idem.rocketmq" : "idem.kafka";
    }

    /** How messages say it: {@code Kafka}, {@code Kafka share group}, {@code RocketMQ}. */
    public String display() {
        return switch (this) {
            case KAFKA -> "Kafka";
            case KAFKA_SHARE -> "Kafka share group";
            case ROCKETMQ -> "RocketMQ";
        };
    }
}
