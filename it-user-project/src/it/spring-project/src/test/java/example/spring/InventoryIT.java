package example.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import dev.idem.core.outbox.OutboxHeaders;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.RocketMqBroker;
import dev.idem.testkit.TestNames;
import dev.idem.testkit.TopicMessage;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.message.Message;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The guide's Spring Boot application, started as its test starts it: three copies of an order deduct
 * stock once, three copies of a payment are captured once, three copies of a refund are refunded once.
 */
@IdemTestKit
class InventoryIT {

    @Test
    void threeCopiesApplyOnce(KafkaBroker kafka, RocketMqBroker rocketMq, RedisEndpoint redis, PostgresDatabase db,
                              TestNames names) throws Exception {
        kafka.createTopic("orders", 3);
        kafka.createTopic("payments", 3);
        kafka.createTopic("stock-reserved", 1);   // Reservations sends there through the outbox
        rocketMq.createTopic("refunds", 4);
        // tag::start[]
        // A schema of this test's own, with the application's tables (Idem's ledger and outbox tables go there too).
        String schema = "inventory_" + Integer.toHexString(names.keyPrefix().hashCode() & 0x7fffffff);
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("create schema " + schema);
            s.execute("create table " + schema + ".stock (sku varchar(32) primary key, quantity int)");
            s.execute("insert into " + schema + ".stock values ('sku-1', 10)");
            s.execute("create table " + schema + ".captured (payment_id varchar(64), body text)");
            s.execute("create table " + schema + ".refunded (refund_id varchar(64))");
            s.execute("create table " + schema + ".reservation (order_id varchar(64), sku varchar(32))");
        }
        // The test kit's addresses, as arguments: they win over application.yml (builder properties do not).
        String[] args = {
                "--idem.redis.url=" + redis.uri(),
                "--idem.redis.key-prefix=" + names.keyPrefix(),
                "--spring.kafka.bootstrap-servers=" + kafka.bootstrapServers(),
                "--rocketmq.name-server=" + rocketMq.nameServerAddress(),
                "--spring.datasource.url=" + db.jdbcUrl(),
                "--spring.datasource.username=" + db.user(),
                "--spring.datasource.password=" + db.password(),
                "--spring.datasource.hikari.schema=" + schema};   // this test's own tables
        try (ConfigurableApplicationContext app = new SpringApplicationBuilder(InventoryApplication.class)
                .run(args)) {
            // ... send messages, then wait for their effect before asserting it
            // end::start[]
            Properties p = new Properties();
            p.put("bootstrap.servers", kafka.bootstrapServers());
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(),
                    new StringSerializer())) {
                for (int partition = 0; partition < 3; partition++) {
                    producer.send(new ProducerRecord<>("orders", partition, "order-1",
                            "{\"id\":\"order-1\",\"sku\":\"sku-1\",\"quantity\":2}")).get();
                    producer.send(new ProducerRecord<>("payments", partition, "payment-1", "{\"amount\":5}")).get();
                }
            }
            DefaultMQProducer refunds = new DefaultMQProducer(names.group("producer"));
            refunds.setNamesrvAddr(rocketMq.nameServerAddress());
            refunds.start();
            try {
                for (int copy = 0; copy < 3; copy++) {
                    refunds.send(new Message("refunds", "*", "refund-1", "refund-1".getBytes(StandardCharsets.UTF_8)));
                }
            } finally {
                refunds.shutdown();
            }
            JdbcTemplate jdbc = app.getBean(JdbcTemplate.class);
            long deadline = System.currentTimeMillis() + 60_000;
            while (System.currentTimeMillis() < deadline
                    && (quantity(jdbc) == 10 || captured(jdbc) == 0 || refunded(jdbc) == 0)) {
                Thread.sleep(200);
            }
            Thread.sleep(3_000);   // time for the other copies to arrive
            assertEquals(8, quantity(jdbc), "three copies of order-1 (quantity 2) deduct once");
            assertEquals(1, captured(jdbc), "three copies of payment-1 are captured once");
            assertEquals(1, refunded(jdbc), "three copies of refund-1 are refunded once");
            assertEquals(1, jdbc.queryForObject("select count(*) from reservation", Integer.class),
                    "three copies of order-1 reserve once");
            List<TopicMessage> reserved = kafka.read("stock-reserved");
            assertEquals(1, reserved.size(), "one stock-reserved message, through the outbox");
            assertNotNull(reserved.get(0).header(OutboxHeaders.MESSAGE_ID), "the outbox id travels with it");
            // tag::start[]
        }
        // end::start[]
    }

    private static int quantity(JdbcTemplate jdbc) {
        return jdbc.queryForObject("select quantity from stock where sku = 'sku-1'", Integer.class);
    }

    private static int refunded(JdbcTemplate jdbc) {
        return jdbc.queryForObject("select count(*) from refunded where refund_id = 'refund-1'", Integer.class);
    }

    private static int captured(JdbcTemplate jdbc) {
        return jdbc.queryForObject("select count(*) from captured where payment_id = 'payment-1'", Integer.class);
    }
}
