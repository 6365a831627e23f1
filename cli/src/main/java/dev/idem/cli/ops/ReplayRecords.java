package dev.idem.cli.ops;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idem.cli.CliException;
import dev.idem.cli.letters.Letter;
import dev.idem.core.spi.ClaimStoreException;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.redisson.api.RMap;
import org.redisson.api.RedissonClient;
import org.redisson.client.RedisException;
import org.redisson.client.codec.StringCodec;

/**
 * The replays and purges done on each dead-letter topic, in Redis: one hash per topic,
 * {@code <prefix>cli:<broker>:<topic>}, field = entry, value = a {@link ReplayRecord} as JSON. Kept
 * without expiry (docs/decisions/0025): a replay refused because it was done before must stay refused
 * longer than any window. Thread-safe.
 */
public final class ReplayRecords {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final RedissonClient redisson;
    private final String prefix;

    ReplayRecords(RedissonClient redisson, String prefix) {
        this.redisson = redisson;
        this.prefix = prefix;
    }

    /** The Redis key of a topic's records. */
    public String redisKey(String broker, String topic) {
        return prefix + "cli:" + broker + ":" + topic;
    }

    private RMap<String, String> map(String broker, String topic) {
        return redisson.getMap(redisKey(broker, topic), StringCodec.INSTANCE);
    }

    /** Every record of a topic, by entry. */
    public Map<String, ReplayRecord> all(String broker, String topic) {
        try {
            Map<String, ReplayRecord> records = new HashMap<>();
            map(broker, topic).readAllMap().forEach((entry, json) -> records.put(entry, parse(json)));
            return records;
        } catch (RedisException e) {
            throw new CliException("cannot read the replay records " + redisKey(broker, topic) + " from Redis: "
                    + e.getMessage(), e);
        }
    }

    /** The record of one entry, if it describes {@code letter}. */
    public Optional<ReplayRecord> of(String broker, String topic, Letter letter) {
        try {
            String json = map(broker, topic).get(letter.entry());
            return Optional.ofNullable(json).map(ReplayRecords::parse).filter(r -> r.describes(letter));
        } catch (RedisException e) {
            throw new ClaimStoreException("cannot read the replay record of " + letter.entry() + ": " + e.getMessage(), e);
        }
    }

    /** Stores the record of one entry, replacing an earlier one. */
    public void put(String broker, String topic, String entry, ReplayRecord record) {
        try {
            map(broker, topic).fastPut(entry, JSON.writeValueAsString(record));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write " + record + " as JSON", e);
        } catch (RedisException e) {
            throw new ClaimStoreException("cannot store the replay record of " + entry + ": " + e.getMessage(), e);
        }
    }

    private static ReplayRecord parse(String json) {
        try {
            return JSON.readValue(json, ReplayRecord.class);
        } catch (JsonProcessingException e) {
            return new ReplayRecord("unreadable", "", "", "", null, null, null, 0);
        }
    }
}
