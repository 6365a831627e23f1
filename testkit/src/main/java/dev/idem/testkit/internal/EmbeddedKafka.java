package dev.idem.testkit.internal;

import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One combined KRaft node (broker and controller) running in this JVM. */
final class EmbeddedKafka extends KafkaTopics {

    private static final Logger LOG = LoggerFactory.getLogger(EmbeddedKafka.class);

    private final KafkaClusterTestKit cluster;

    private EmbeddedKafka(KafkaClusterTestKit cluster) {
        this.cluster = cluster;
    }

    static EmbeddedKafka start(Path workDir) {
        long started = System.nanoTime();
        try {
            Path dir = Files.createDirectories(workDir.resolve("kafka"));
            TestKitNodes nodes = new TestKitNodes.Builder()
                    .setCombined(true)
                    .setNumBrokerNodes(1)
                    .setNumControllerNodes(1)
                    .setBaseDirectory(Files.createTempDirectory(dir, "node-"))
                    .build();
            KafkaClusterTestKit cluster = new KafkaClusterTestKit.Builder(nodes)
                    // One node: internal topics must not ask for three replicas, or groups hang forever.
                    .setConfigProp("offsets.topic.replication.factor", "1")
                    .setConfigProp("offsets.topic.num.partitions", "5")
                    .setConfigProp("transaction.state.log.replication.factor", "1")
                    .setConfigProp("transaction.state.log.min.isr", "1")
                    .setConfigProp("share.coordinator.state.topic.replication.factor", "1")
                    .setConfigProp("share.coordinator.state.topic.min.isr", "1")
                    // A share-group member killed in a test leaves the group after 6 s, not Kafka's 45 s.
                    .setConfigProp("group.share.min.session.timeout.ms", "6000")
                    .setConfigProp("group.share.session.timeout.ms", "6000")
                    .setConfigProp("group.share.min.heartbeat.interval.ms", "1000")
                    .setConfigProp("group.share.heartbeat.interval.ms", "1000")
                    // The same for a member of a consumer-protocol group (KIP-848, group.protocol=consumer):
                    // its broker-side session is 45 s by default, during which its partitions wait.
                    .setConfigProp("group.consumer.min.session.timeout.ms", "6000")
                    .setConfigProp("group.consumer.session.timeout.ms", "6000")
                    .setConfigProp("group.consumer.min.heartbeat.interval.ms", "1000")
                    .setConfigProp("group.consumer.heartbeat.interval.ms", "1000")
                    // Tests start consumers right after topics: no 3-second wait for more members.
                    .setConfigProp("group.initial.rebalance.delay.ms", "0")
                    // The default 128 MiB dedupe buffer exhausts small test heaps.
                    .setConfigProp("log.cleaner.dedupe.buffer.size", "4194304")
                    // Topics are created on purpose; a typo must not create one silently.
                    .setConfigProp("auto.create.topics.enable", "false")
                    .build();
            cluster.format();
            cluster.startup();
            cluster.waitForReadyBrokers();
            LOG.info("Kafka started at {} in {} ms", cluster.bootstrapServers(),
                    (System.nanoTime() - started) / 1_000_000);
            return new EmbeddedKafka(cluster);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted starting Kafka", e);
        } catch (Exception e) {
            throw new IllegalStateException("could not start the in-process Kafka broker", e);
        }
    }

    @Override
    public String bootstrapServers() {
        return cluster.bootstrapServers();
    }

    @Override
    public void close() throws Exception {
        try {
            super.close();
        } finally {
            cluster.close();
        }
    }
}
