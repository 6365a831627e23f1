package dev.idem.rocketmq.internal;

import java.time.Duration;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.impl.consumer.ProcessQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stops a push consumer without cutting its handlers off (decision 0013). {@code shutdown()} on
 * its own gives the consume threads no grace: it interrupts running listener calls. In order:
 * <ol>
 *   <li>stop taking work: pause pulling and close the gate, so listener calls not yet started
 *       process nothing and stalled ones answer at once;</li>
 *   <li>let running listener calls finish, for at most {@code grace};</li>
 *   <li>drop the consumer's process queues, so what was pulled but not processed is neither run
 *       nor sent back (it stays unacknowledged and comes back from the committed offset), then
 *       shut the client down, which commits the offsets of what finished;</li>
 *   <li>the caller then closes the processor and the dead-letter producer.</li>
 * </ol>
 * Not public API. Thread-safe.
 */
public final class OrderedShutdown {

    private static final Logger LOG = LoggerFactory.getLogger(OrderedShutdown.class);
    // The client's own grace for its consume threads once the queues are dropped: long enough for
    // refused calls to return, short because nothing still running deserves more than `grace` had.
    private static final long CLIENT_GRACE_MILLIS = 1_000;

    private OrderedShutdown() {
    }

    /** Runs steps 1 to 3 and logs what was left. */
    // The process queues are reachable only through the client's deprecated implementation accessor.
    @SuppressWarnings("deprecation")
    public static void stop(DefaultMQPushConsumer consumer, ListenerGate gate, Duration grace) {
        String group = consumer.getConsumerGroup();
        consumer.suspend();
        gate.close();
        long started = System.nanoTime();
        int stillRunning = gate.awaitIdle(grace);
        int unprocessed = 0;
        for (ProcessQueue queue : consumer.getDefaultMQPushConsumerImpl().getRebalanceImpl()
                .getProcessQueueTable().values()) {
            queue.setDropped(true);
            unprocessed += (int) queue.getMsgCount().get();
        }
        gate.release();
        consumer.setAwaitTerminationMillisWhenShutdown(CLIENT_GRACE_MILLIS);
        consumer.shutdown();
        long waited = Duration.ofNanos(System.nanoTime() - started).toMillis();
        if (stillRunning > 0) {
            LOG.warn("consumer group {} closed after {} ms: {} listener call(s) still running after the {} grace were"
                    + " interrupted; {} message(s) pulled but not acknowledged will be redelivered",
                    group, waited, stillRunning, grace, unprocessed);
        } else {
            LOG.info("consumer group {} closed after {} ms: running listener calls finished; {} message(s) pulled"
                    + " but not acknowledged will be redelivered", group, waited, unprocessed);
        }
    }
}
