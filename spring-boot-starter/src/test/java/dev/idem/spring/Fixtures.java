package dev.idem.spring;

import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RocketMqBroker;
import dev.idem.testkit.TestNames;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.rocketmq.client.consumer.DefaultMQPullConsumer;
import org.apache.rocketmq.client.consumer.PullResult;
import org.apache.rocketmq.client.consumer.PullStatus;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageQueue;

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

    /** The keys of every message on a RocketMQ topic, pulled by offset from the start of each queue. */
    @SuppressWarnings("deprecation") // DefaultMQPullConsumer: the client's one API for pulling by offset.
    static List<String> rocketMqDeadLetters(RocketMqBroker rocketMq, String topic, TestNames names) throws Exception {
        DefaultMQPullConsumer reader = new DefaultMQPullConsumer(names.group("dlq-reader"));
        reader.setNamesrvAddr(rocketMq.nameServerAddress());
        reader.setInstanceName("dlq-reader-" + System.nanoTime());
        reader.start();
        try {
            List<String> keys = new ArrayList<>();
            for (MessageQueue queue : reader.fetchSubscribeMessageQueues(topic)) {
                PullResult result = reader.pull(queue, "*", 0, 32, 3_000);
                if (result.getPullStatus() == PullStatus.FOUND) {
                    result.getMsgFoundList().forEach(m -> keys.add(m.getKeys()));
                }
            }
            return keys;
        } finally {
            reader.shutdown();
        }
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

    /** Every record of a Kafka topic, read until two quiet seconds after the last (or 15 s with none). */
    static List<ConsumerRecord<String, String>> deadLetters(KafkaBroker kafka, String topic) {
        Properties p = new Properties();
        p.put("bootstrap.servers", kafka.bootstrapServers());
        p.put("group.id", "dlt-reader-" + System.nanoTime());
        p.put("auto.offset.reset", "earliest");
        List<ConsumerRecord<String, String>> letters = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p, new StringDeserializer(),
                new StringDeserializer())) {
            consumer.subscribe(List.of(topic));
            long deadline = System.currentTimeMillis() + 15_000;
            while (System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                    letters.add(record);
                    deadline = Math.min(deadline, System.currentTimeMillis() + 2_000);
                }
            }
        }
        return letters;
    }
}
