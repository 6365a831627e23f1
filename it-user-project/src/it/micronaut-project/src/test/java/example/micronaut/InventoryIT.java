package example.micronaut;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import dev.idem.core.outbox.OutboxHeaders;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.TestNames;
import dev.idem.testkit.TopicMessage;
import io.micronaut.context.ApplicationContext;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/** The README's Micronaut bean, started as an application: three copies of an order deduct stock once. */
@IdemTestKit
class InventoryIT {

    private static final String H2 = "jdbc:h2:mem:inventory;DB_CLOSE_DELAY=-1";

    @Test
    void threeCopiesDeductOnce(KafkaBroker kafka, RedisEndpoint redis, TestNames names) throws Exception {
        kafka.createTopic("orders", 3);
        kafka.createTopic("payments", 1);   // the README's wrapped listener (Billing) consumes it
        kafka.createTopic("stock-reserved", 1);   // Reservations sends there through the outbox
        // tag::start[]
        // The test kit's addresses, and an in-memory database instead of application.yml's PostgreSQL.
        Map<String, Object> properties = Map.of(
                "idem.redis.address", redis.uri().toString(),
                "idem.redis.key-prefix", names.keyPrefix(),
                "idem.kafka.bootstrap.servers", kafka.bootstrapServers(),
                "kafka.bootstrap.servers", kafka.bootstrapServers(),
                "datasources.default.url", H2,
                "datasources.default.username", "sa",
                "datasources.default.password", "",
                "datasources.default.driver-class-name", "org.h2.Driver");
        // end::start[]
        try (ApplicationContext context = ApplicationContext.run(properties)) {
            // The application's DataSource answers inside transactions only: the test reads the
            // same in-memory database directly.
            try (Connection c = connect(); Statement s = c.createStatement()) {
                s.execute("create table stock (sku varchar(32) primary key, quantity int)");
                s.execute("insert into stock values ('sku-1', 10)");
                s.execute("create table reservation (order_id varchar(64), sku varchar(32))");
            }
            Properties p = new Properties();
            p.put("bootstrap.servers", kafka.bootstrapServers());
            p.put("key.serializer", StringSerializer.class.getName());
            p.put("value.serializer", StringSerializer.class.getName());
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
                for (int partition = 0; partition < 3; partition++) {
                    producer.send(new ProducerRecord<>("orders", partition, "order-1",
                            "{\"id\":\"order-1\",\"sku\":\"sku-1\",\"quantity\":2}")).get();
                }
            }
            long deadline = System.currentTimeMillis() + 60_000;
            while (quantity() == 10 && System.currentTimeMillis() < deadline) {
                Thread.sleep(200);
            }
            Thread.sleep(3_000);   // time for the other two copies to arrive
            assertEquals(8, quantity(), "three copies of order-1 (quantity 2) deduct once");
            deadline = System.currentTimeMillis() + 30_000;
            while (kafka.read("stock-reserved").isEmpty() && System.currentTimeMillis() < deadline) {
                Thread.sleep(200);
            }
            List<TopicMessage> reserved = kafka.read("stock-reserved");
            assertEquals(1, reserved.size(), "three copies of order-1: one stock-reserved message, through the outbox");
            assertNotNull(reserved.get(0).header(OutboxHeaders.MESSAGE_ID), "the outbox id travels with it");
        }
    }

    private static Connection connect() throws Exception {
        return DriverManager.getConnection(H2, "sa", "");
    }

    private static int quantity() throws Exception {
        try (Connection c = connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("select quantity from stock where sku = 'sku-1'")) {
            rs.next();
            return rs.getInt(1);
        }
    }
}
