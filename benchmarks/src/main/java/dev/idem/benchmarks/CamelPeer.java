package dev.idem.benchmarks;

import java.net.URI;
import java.time.Duration;
import org.apache.camel.CamelContext;
import org.apache.camel.builder.RouteBuilder;
import org.apache.camel.component.kafka.KafkaConstants;
import org.apache.camel.component.redis.processor.idempotent.SpringRedisStringIdempotentRepository;
import org.apache.camel.impl.DefaultCamelContext;
import org.apache.camel.processor.idempotent.jdbc.JdbcMessageIdRepository;
import javax.sql.DataSource;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The peer a user would pick instead of Idem: Apache Camel's Idempotent Consumer EIP, set up as
 * Camel's documentation shows it, on a camel-kafka route from the topic's beginning, the record key
 * as the message id, and camel-spring-redis's {@code SpringRedisStringIdempotentRepository} (one Redis key
 * per id, with an expiry, as Idem's done keys have) over Spring Data Redis and Jedis; and, for the
 * PostgreSQL table, the same EIP with camel-sql's JDBC repository.
 */
final class CamelPeer {

    // The same window Idem's done keys have by default.
    private static final long EXPIRY_SECONDS = Duration.ofDays(7).toSeconds();

    private CamelPeer() {
    }

    /** What the PostgreSQL route does with an order once Camel let it through. */
    interface OrderHandler {
        void handle(Stock.Order order) throws Exception;
    }

    /** How long the caller consumes, once the route runs. */
    interface Consumption {
        Meter.Measured await() throws Exception;
    }

    /**
     * The PostgreSQL table's peer: a camel-kafka route with {@code consumers} consumers, the order id as
     * the message id, camel-sql's {@code JdbcMessageIdRepository} in the same database (its own table,
     * one transaction per id, as Camel's documentation sets it up), then the handler.
     */
    static Meter.Measured consumeOrders(String bootstrapServers, String topic, String group, DataSource pool, int consumers,
                                        Meter meter, OrderHandler handler, Consumption consumption) throws Exception {
        JdbcMessageIdRepository repository = new JdbcMessageIdRepository(pool, group);
        try (CamelContext camel = new DefaultCamelContext()) {
            camel.addRoutes(new RouteBuilder() {
                @Override
                public void configure() {
                    from("kafka:" + topic + "?brokers=" + bootstrapServers + "&groupId=" + group
                            + "&autoOffsetReset=earliest&consumersCount=" + consumers
                            + "&valueDeserializer=org.apache.kafka.common.serialization.ByteArrayDeserializer")
                            // Every exchange counts as consumed when it ends: a copy that lost the race for
                            // the repository's insert fails (Camel's JDBC repository does not catch the
                            // duplicate key), and camel-kafka moves on past it.
                            .onCompletion().process(exchange -> meter.handled(1)).end()
                            .process(exchange -> {
                                meter.arrived();
                                Stock.Order order = Orders.JSON.readValue(exchange.getIn().getBody(byte[].class),
                                        Stock.Order.class);
                                exchange.getIn().setBody(order);
                                exchange.getIn().setHeader("orderId", order.orderId());
                            })
                            .idempotentConsumer(header("orderId"), repository)
                            .process(exchange -> handler.handle(exchange.getIn().getBody(Stock.Order.class)))
                            .end();
                }
            });
            camel.start();
            return consumption.await();
        }
    }

    static Meter.Measured consume(String bootstrapServers, String topic, String group, URI redis, Meter meter,
                                  int messages, Duration limit) throws Exception {
        JedisConnectionFactory connections = new JedisConnectionFactory(
                new RedisStandaloneConfiguration(redis.getHost(), redis.getPort()));
        connections.afterPropertiesSet();
        connections.start();
        StringRedisTemplate template = new StringRedisTemplate(connections);
        SpringRedisStringIdempotentRepository repository = new SpringRedisStringIdempotentRepository(template, group);
        repository.setExpiry(EXPIRY_SECONDS);
        try (CamelContext camel = new DefaultCamelContext()) {
            camel.addRoutes(new RouteBuilder() {
                @Override
                public void configure() {
                    from("kafka:" + topic + "?brokers=" + bootstrapServers + "&groupId=" + group
                            + "&autoOffsetReset=earliest&maxPollRecords=500"
                            + "&keyDeserializer=org.apache.kafka.common.serialization.StringDeserializer"
                            + "&valueDeserializer=org.apache.kafka.common.serialization.ByteArrayDeserializer")
                            .idempotentConsumer(header(KafkaConstants.KEY), repository)
                            .process(exchange -> {
                                meter.arrived();
                                meter.handled(1);
                            });
                }
            });
            camel.start();
            return meter.await(messages, limit);
        } finally {
            connections.destroy();
        }
    }
}
