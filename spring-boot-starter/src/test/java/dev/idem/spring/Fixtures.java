package dev.idem.spring;

import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RocketMqBroker;
import dev.idem.testkit.TestNames;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.message.Message;

/** What the starter's ITs share: the effect table, producers, and reading dead-letter topics back. */
final class Fixtures {

    private Fixtures() {
    }

    /** A new effect table {@code (id)} named from the test, where the listeners write one row per effect. */
    static String effectTable(PostgresDatabase db, TestNames names, String prefix) throws Exception {
        String table = prefix + "_" + Integer.toHexString(names.keyPrefix().hashCode() & 0x7fffffff);
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("create table " + table + " (id varchar(64) not null)");
        }
        return table;
    }

    /** Rows per id in an effect table. */
    static Map<String, Integer> rows(PostgresDatabase db, String table) throws Exception {
        Map<String, Integer> rows = new HashMap<>();
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet r = s.executeQuery("select id, count(*) from " + table + " group by id")) {
            while (r.next()) {
                rows.put(r.getString(1), r.getInt(2));
            }
        }
        return rows;
    }

    static KafkaProducer<String, String> producer(KafkaBroker kafka) {
        Properties p = new Properties();
        p.put("bootstrap.servers", kafka.bootstrapServers());
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    /** Sends each id {@code copies} times with the body {@code body(id)}, the id as the message key, over the queues. */
    static void sendRocketMq(RocketMqBroker rocketMq, String topic, TestNames names, List<String> ids, int copies,
                             java.util.function.Function<String, String> body) throws Exception {
        DefaultMQProducer producer = new DefaultMQProducer(names.group("producer"));
        producer.setNamesrvAddr(rocketMq.nameServerAddress());
        producer.setInstanceName("producer-" + System.nanoTime());
        producer.start();
        try {
            int n = 0;
            for (int copy = 0; copy < copies; copy++) {
                for (String id : ids) {
                    Message message = new Message(topic, "*", id, body.apply(id).getBytes(StandardCharsets.UTF_8));
                    int queue = n++;
                    producer.send(message, (queues, msg, arg) -> queues.get(queue % queues.size()), null);
                }
            }
        } finally {
            producer.shutdown();
        }
    }
}
