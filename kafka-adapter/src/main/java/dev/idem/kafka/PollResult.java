package dev.idem.kafka;

import dev.idem.core.Outcome;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * What a poll loop must do after one poll: commit these offsets (each past the last finished
 * record of its partition), and seek these partitions back and pause them. Immutable.
 *
 * @param commits      offsets to commit; a partition whose first record must be redelivered has none
 * @param redeliveries partitions to seek back and pause
 * @param outcomes     the outcome of every record processed, in processing order per partition
 */
public record PollResult(Map<TopicPartition, OffsetAndMetadata> commits, Map<TopicPartition, Redelivery> redeliveries,
                         List<Outcome> outcomes) {

    /** @throws NullPointerException if a part is null */
    public PollResult {
        commits = Map.copyOf(commits);
        redeliveries = Map.copyOf(redeliveries);
        outcomes = List.copyOf(outcomes);
    }
}
