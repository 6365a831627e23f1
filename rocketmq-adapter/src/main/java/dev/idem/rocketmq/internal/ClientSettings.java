package dev.idem.rocketmq.internal;

import java.lang.reflect.Field;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.remoting.RPCHook;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Copies a push consumer's client configuration onto a producer, so Idem's dead-letter producer
 * reaches the broker the way the consumer does: ACL (the RPC hook), namespace, TLS, access channel,
 * name server, client IP and the rest of {@code ClientConfig}. Works with the 4.9 and 5.x clients.
 * Not public API. Thread-safe.
 */
public final class ClientSettings {

    private static final Logger LOG = LoggerFactory.getLogger(ClientSettings.class);

    private ClientSettings() {
    }

    /**
     * The RPC hook (ACL credentials) the consumer was constructed with, or null. Neither the 4.9 nor
     * the 5.x client has a getter for it; both keep it in {@code DefaultMQPushConsumerImpl.rpcHook}.
     */
    @SuppressWarnings("deprecation")
    public static @Nullable RPCHook rpcHook(DefaultMQPushConsumer consumer) {
        Object impl = consumer.getDefaultMQPushConsumerImpl();
        try {
            Field field = impl.getClass().getDeclaredField("rpcHook");
            field.setAccessible(true);
            return (RPCHook) field.get(impl);
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.warn("cannot read the RPC hook of consumer group {}; the dead-letter producer runs without one "
                    + "(set your own dead-letter publisher if the broker needs ACL credentials)",
                    consumer.getConsumerGroup(), e);
            return null;
        }
    }

    /** Gives {@code producer} the consumer's client settings, then its own instance name. */
    public static void copy(DefaultMQPushConsumer consumer, DefaultMQProducer producer, String instanceName) {
        // resetClientConfig copies name server, client IP, namespace, TLS, VIP channel, timeouts...
        producer.resetClientConfig(consumer);
        // ...but not the access channel (5.5.0), which says whether to sign for a cloud broker.
        producer.setAccessChannel(consumer.getAccessChannel());
        producer.setInstanceName(instanceName);
    }
}
