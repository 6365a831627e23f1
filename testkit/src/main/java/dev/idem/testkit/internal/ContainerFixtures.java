package dev.idem.testkit.internal;

import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import java.util.Collections;
import org.testcontainers.containers.FixedHostPortGenericContainer;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.Transferable;
import org.testcontainers.kafka.KafkaContainer;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * The same fixtures from Testcontainers, selected with {@code -Didem.testkit=containers}. Needs a
 * Docker engine. Images are those of {@code docker/compose.yml}; keep the two in step.
 */
final class ContainerFixtures {

    static final String REDIS_IMAGE = "redis:7.0";
    static final String KAFKA_IMAGE = "apache/kafka:4.3.1";
    static final String ROCKETMQ_IMAGE = "apache/rocketmq:5.5.0";
    static final String POSTGRES_IMAGE = "postgres:15";

    // The broker advertises 127.0.0.1:<port> to clients, so the host ports must equal the container's.
    private static final int NAME_SERVER_PORT = 9876;
    private static final int BROKER_PORT = 10911;

    private ContainerFixtures() {
    }

    static KafkaTopics kafka() {
        KafkaContainer container = new KafkaContainer(KAFKA_IMAGE);
        container.start();
        return new KafkaTopics() {
            @Override
            public String bootstrapServers() {
                return container.getBootstrapServers();
            }

            @Override
            public void close() throws Exception {
                try {
                    super.close();
                } finally {
                    container.stop();
                }
            }
        };
    }

    static Started redis() {
        GenericContainer<?> container = new GenericContainer<>(REDIS_IMAGE)
                .withCommand("redis-server", "--save", "", "--appendonly", "no", "--maxmemory-policy", "noeviction")
                .withExposedPorts(6379);
        container.start();
        return new Started(RedisEndpoint.of(container.getHost(), container.getMappedPort(6379)), container::stop);
    }

    static PostgresProbe postgres() {
        PostgreSQLContainer container = new PostgreSQLContainer(POSTGRES_IMAGE);
        container.start();
        Runtime.getRuntime().addShutdownHook(new Thread(container::stop, "idem-testkit-postgres-stop"));
        return PostgresProbe.found(
                new PostgresDatabase(container.getJdbcUrl(), container.getUsername(), container.getPassword()));
    }

    @SuppressWarnings("deprecation") // fixed host ports are what RocketMQ's advertised address needs
    static RocketMqTopics rocketMq() {
        String brokerConf = String.join("\n",
                "brokerClusterName=idem-test-cluster",
                "brokerName=idem-test-broker",
                "brokerIP1=127.0.0.1",
                "listenPort=" + BROKER_PORT,
                "autoCreateTopicEnable=true",
                "messageDelayLevel=" + String.join(" ", Collections.nCopies(18, "1s")));
        FixedHostPortGenericContainer<?> container = new FixedHostPortGenericContainer<>(ROCKETMQ_IMAGE)
                .withFixedExposedPort(NAME_SERVER_PORT, NAME_SERVER_PORT)
                .withFixedExposedPort(BROKER_PORT, BROKER_PORT)
                .withFixedExposedPort(BROKER_PORT - 2, BROKER_PORT - 2)
                .withCopyToContainer(Transferable.of(brokerConf), "/home/rocketmq/broker.conf")
                .withCommand("sh", "-c", "./mqnamesrv & ./mqbroker -n 127.0.0.1:" + NAME_SERVER_PORT
                        + " -c /home/rocketmq/broker.conf")
                .waitingFor(Wait.forLogMessage(".*boot success.*", 1));
        container.start();
        String nameServer = container.getHost() + ":" + NAME_SERVER_PORT;
        try {
            RocketMqTopics topics = new RocketMqTopics(nameServer) {
                @Override
                public String nameServerAddress() {
                    return nameServer;
                }

                @Override
                public void close() throws Exception {
                    try {
                        super.close();
                    } finally {
                        container.stop();
                    }
                }
            };
            topics.awaitBroker();
            return topics;
        } catch (Exception e) {
            container.stop();
            throw new IllegalStateException("RocketMQ container started but its broker is not reachable", e);
        }
    }
}
