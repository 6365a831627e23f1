package dev.idem.rocketmq.internal;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import org.apache.rocketmq.client.consumer.AllocateMessageQueueStrategy;
import org.apache.rocketmq.common.message.MessageQueue;

/**
 * An allocation strategy that counts each client of the group once before the strategy it wraps
 * divides the queues. The broker lists a client once per connection: a client paused for longer
 * than its request timeouts (a long GC, a stopped VM) reconnects, and its old connection stays
 * listed until the broker expires it, two minutes later. Every consumer then allocates over a list
 * with that client twice, and the queues of the second entry are consumed by nobody meanwhile (the
 * soak measured 3 of 12 queues idle for those two minutes). Every consumer of the group reads the
 * same list, so all of them drop the same duplicates. Not public API. Thread-safe if the wrapped
 * strategy is.
 */
public final class DistinctClients implements AllocateMessageQueueStrategy {

    private final AllocateMessageQueueStrategy strategy;

    public DistinctClients(AllocateMessageQueueStrategy strategy) {
        this.strategy = Objects.requireNonNull(strategy, "strategy");
    }

    @Override
    public List<MessageQueue> allocate(String consumerGroup, String currentCID, List<MessageQueue> mqAll,
                                       List<String> cidAll) {
        // Order kept: the client sorts the list, and the wrapped strategy relies on that order.
        List<String> distinct = cidAll == null ? null : new ArrayList<>(new LinkedHashSet<>(cidAll));
        return strategy.allocate(consumerGroup, currentCID, mqAll, distinct);
    }

    @Override
    public String getName() {
        return strategy.getName();
    }
}
