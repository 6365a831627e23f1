package example.readme;

// tag::wrap[]
import dev.idem.core.KeySource;
import dev.idem.rocketmq.IdemRocketMq;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
// end::wrap[]
import dev.idem.core.DedupCheck;
import dev.idem.redis.RedisClaimStore;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.exception.MQClientException;

/** README and docs/guide/rocketmq.md, "RocketMQ in one line": Idem in front of a listener you already have. */
final class RocketMqWrap {

    void run(MessageListenerConcurrently existingListener, RedisClaimStore claims, DedupCheck<Object> ordersTable)
            throws MQClientException {
        // tag::wrap[]
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("inventory");   // your consumer, not started yet
        consumer.setNamesrvAddr("localhost:9876");
        consumer.subscribe("orders", "*");
        consumer.setMaxReconsumeTimes(37);                        // at least maxAttempts (5) + 32, see below
        IdemRocketMq.Idem idem = IdemRocketMq.wrapConcurrently(consumer, existingListener,
                processor -> processor.claims(claims).dedupCheck(ordersTable).keys(KeySource.messageKey()));
        consumer.start();
        // ...
        idem.close();                                             // shuts the consumer down in order, then Idem
        // end::wrap[]
    }
}
