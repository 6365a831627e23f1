package dev.idem.cli.commands;

import dev.idem.cli.ops.Broker;
import picocli.CommandLine.Option;

/** Which dead-letter topic: {@code --broker} and {@code --topic}. */
final class TopicOptions {

    @Option(names = {"-b", "--broker"}, required = true, paramLabel = "kafka|rocketmq",
            completionCandidates = Broker.Names.class,
            description = "Broker of the dead-letter topic: ${COMPLETION-CANDIDATES}")
    Broker broker;

    @Option(names = {"-t", "--topic"}, required = true, paramLabel = "<topic>",
            description = "The dead-letter topic, e.g. orders.DLT (Kafka) or orders_DLQ (RocketMQ)")
    String topic;
}
