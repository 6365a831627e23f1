package dev.idem.testkit.internal;

import dev.idem.testkit.RocketMqBroker;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.constant.PermName;
import org.apache.rocketmq.remoting.protocol.body.ClusterInfo;
import org.apache.rocketmq.remoting.protocol.route.BrokerData;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;

/** Topic creation through the admin client, shared by every RocketMQ fixture. Thread-safe. */
abstract class RocketMqTopics implements RocketMqBroker, AutoCloseable {

    static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final DefaultMQAdminExt admin;

    RocketMqTopics(String nameServerAddress) throws Exception {
        admin = new DefaultMQAdminExt(TIMEOUT.toMillis());
        admin.setNamesrvAddr(nameServerAddress);
        admin.setInstanceName("idem-testkit-admin-" + System.nanoTime());
        admin.start();
    }

    /** Waits until the name server lists a broker; returns its address. */
    final String awaitBroker() throws InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (true) {
            try {
                ClusterInfo info = admin.examineBrokerClusterInfo();
                for (BrokerData broker : info.getBrokerAddrTable().values()) {
                    String address = broker.getBrokerAddrs().get(MixAll.MASTER_ID);
                    if (address != null) {
                        return address;
                    }
                }
            } catch (Exception notYet) {
                // The name server answers before the broker has registered; try again.
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no RocketMQ broker registered after " + TIMEOUT);
            }
            TimeUnit.MILLISECONDS.sleep(100);
        }
    }

    @Override
    public void createTopic(String topic, int queues) {
        if (queues < 1) {
            throw new IllegalArgumentException("queues must be >= 1 but was " + queues);
        }
        try {
            String broker = awaitBroker();
            admin.createAndUpdateTopicConfig(broker,
                    new TopicConfig(topic, queues, queues, PermName.PERM_READ | PermName.PERM_WRITE));
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (!routed(topic)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("topic " + topic + " has no route after " + TIMEOUT);
                }
                TimeUnit.MILLISECONDS.sleep(50);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted creating topic " + topic, e);
        } catch (IllegalStateException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("could not create topic " + topic, e);
        }
    }

    @Override
    public void createRetryTopic(String consumerGroup) {
        createTopic(MixAll.getRetryTopic(consumerGroup), 1);
    }

    private boolean routed(String topic) {
        try {
            return !admin.examineTopicRouteInfo(topic).getQueueDatas().isEmpty();
        } catch (Exception notYet) {
            return false;
        }
    }

    /** Shuts the admin client down; subclasses stop the broker after calling this. */
    @Override
    public void close() throws Exception {
        admin.shutdown();
    }
}
