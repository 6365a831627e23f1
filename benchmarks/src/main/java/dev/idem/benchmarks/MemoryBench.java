package dev.idem.benchmarks;

import dev.idem.core.IdempotencyKey;
import dev.idem.redis.RedisClaimStore;
import dev.idem.core.spi.ClaimRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.redisson.api.RedissonClient;
import org.redisson.api.redisnode.RedisNode;
import org.redisson.api.redisnode.RedisNodes;
import org.redisson.client.codec.StringCodec;

/** Redis memory per done key: MEMORY USAGE over a sample of keys completed through the claim store. */
final class MemoryBench {

    /**
     * @param bytesPerKey     average MEMORY USAGE of a done key
     * @param keyLength       length of the sampled Redis key names
     * @param sampled         keys measured
     */
    record Memory(double bytesPerKey, int keyLength, int sampled) {
    }

    /**
     * Redis memory at scale: what INFO's {@code used_memory} grew by per done key, which counts what
     * MEMORY USAGE leaves out (the keyspace's and the expiry table's entries, their buckets, allocator
     * rounding), measured over a number of keys a production window holds.
     *
     * @param usedBytesPerKey {@code used_memory} after less before, per key, batch records included
     * @param keys            keys completed
     * @param guardedWindow   how long a guarded processor keeps its done keys by default
     * @param redisOnlyWindow how long a Redis-only processor keeps them by default
     */
    record Scale(double usedBytesPerKey, int keys, Duration guardedWindow, Duration redisOnlyWindow) {

        /** Redis memory, in bytes, of a window's done keys at {@code perSecond} messages a second. */
        double bytesAt(int perSecond, Duration window) {
            return usedBytesPerKey * perSecond * window.toSeconds();
        }
    }

    private static final int BATCH = 32;
    private final RedissonClient redisson;

    MemoryBench(RedissonClient redisson) {
        this.redisson = redisson;
    }

    /**
     * Completes {@code keys} keys under a prefix of their own (in batches of 32, as {@link #run}) and
     * reads how much {@code used_memory} grew, then deletes them by that prefix.
     */
    Scale atScale(int keys) {
        String prefix = "idem-scale-" + System.nanoTime() + ":";
        RedisClaimStore store = RedisClaimStore.builder(redisson).keyPrefix(prefix).build();
        long before = usedMemory();
        List<IdempotencyKey> batch = new ArrayList<>(BATCH);
        for (int i = 0; i < keys; i++) {
            batch.add(new IdempotencyKey("inventory", "orders", String.format("order-%08d:deduct", i)));
            if (batch.size() == BATCH || i == keys - 1) {
                store.claim(batch.stream().map(k -> new ClaimRequest(k, 0)).toList(), "bench", Duration.ofSeconds(30));
                store.complete(batch, "bench");
                batch = new ArrayList<>(BATCH);
            }
        }
        long after = usedMemory();
        redisson.getKeys().deleteByPattern(prefix + "*");
        return new Scale((after - before) / (double) keys, keys, store.guarded().orElseThrow().doneWindow(), store.doneWindow());
    }

    private long usedMemory() {
        Map<String, String> info = redisson.getRedisNodes(RedisNodes.SINGLE).getInstance()
                .info(RedisNode.InfoSection.MEMORY);
        return Long.parseLong(info.get("used_memory"));
    }

    /**
     * Claims and completes {@code keys} keys in batches of 32 (a RocketMQ listener call, the smallest
     * batch an adapter completes whole), then averages MEMORY USAGE over a sample of them, adding
     * each sampled key's share of its batch record.
     */
    Memory run(int keys, int sample) {
        // A production-like key: prefix, group, topic and a business key.
        RedisClaimStore store = RedisClaimStore.builder(redisson).keyPrefix("idem:").build();
        List<IdempotencyKey> all = new ArrayList<>(keys);
        for (int i = 0; i < keys; i++) {
            all.add(new IdempotencyKey("inventory", "orders", String.format("order-%08d:deduct", i)));
        }
        for (int from = 0; from < keys; from += BATCH) {
            List<IdempotencyKey> batch = all.subList(from, Math.min(keys, from + BATCH));
            store.claim(batch.stream().map(k -> new ClaimRequest(k, 0)).toList(), "bench", Duration.ofSeconds(30));
            store.complete(batch, "bench");
        }
        double total = 0;
        int step = Math.max(1, keys / sample);
        int measured = 0;
        Set<String> batchRecords = new HashSet<>();
        for (int i = 0; i < keys; i += step) {
            String name = store.redisKey(all.get(i));
            total += redisson.getBucket(name).sizeInMemory();
            String value = redisson.<String>getBucket(name, StringCodec.INSTANCE).get();
            if (value != null && value.startsWith("b")) {
                String record = batchRecord(value);
                total += redisson.getBucket(record).sizeInMemory() / (double) BATCH;
                batchRecords.add(record);
            }
            measured++;
        }
        int keyLength = store.redisKey(all.get(0)).length();
        for (IdempotencyKey key : all) {
            String value = redisson.<String>getBucket(store.redisKey(key), StringCodec.INSTANCE).get();
            if (value != null && value.startsWith("b")) {
                batchRecords.add(batchRecord(value));
            }
            store.reset(key);
        }
        redisson.getKeys().delete(batchRecords.toArray(String[]::new));
        return new Memory(total / measured, keyLength, measured);
    }

    /** The batch record a compact value ({@code b<9-character id><2-character place>}) names. */
    private static String batchRecord(String compact) {
        return "idem:batch:" + compact.substring(1, 10);
    }
}
