package dev.idem.testkit.internal;

import dev.idem.testkit.KafkaBroker;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.jspecify.annotations.Nullable;

/** Topic creation through the Admin client, shared by every Kafka fixture. Thread-safe. */
abstract class KafkaTopics implements KafkaBroker, AutoCloseable {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private volatile @Nullable Admin admin;

    @Override
    public void createTopic(String topic, int partitions) {
        if (partitions < 1) {
            throw new IllegalArgumentException("partitions must be >= 1 but was " + partitions);
        }
        try {
            admin().createTopics(List.of(new NewTopic(topic, partitions, (short) 1)))
                    .all().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (!visible(topic, partitions)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("topic " + topic + " not visible after " + TIMEOUT);
                }
                TimeUnit.MILLISECONDS.sleep(20);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted creating topic " + topic, e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("could not create topic " + topic, e);
        }
    }

    private boolean visible(String topic, int partitions) throws InterruptedException {
        try {
            TopicDescription description = admin().describeTopics(List.of(topic)).allTopicNames()
                    .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).get(topic);
            return description != null && description.partitions().size() == partitions
                    && description.partitions().stream().allMatch(p -> p.leader() != null);
        } catch (ExecutionException | TimeoutException e) {
            return false;
        }
    }

    private Admin admin() {
        Admin current = admin;
        if (current == null) {
            synchronized (this) {
                if (admin == null) {
                    admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers()));
                }
                current = admin;
            }
        }
        return current;
    }

    /** Closes the admin client; subclasses close the broker after calling this. */
    @Override
    public void close() throws Exception {
        Admin current = admin;
        if (current != null) {
            current.close(Duration.ofSeconds(5));
        }
    }
}
