package dev.idem.benchmarks;

import dev.idem.core.IdempotencyKey;
import dev.idem.redis.RedisClaimStore;
import dev.idem.core.spi.ClaimRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.redisson.api.RedissonClient;

/** Redis memory per done key: MEMORY USAGE over a sample of keys completed through the claim store. */
final class MemoryBench {

    /**
     * @param bytesPerKey     average MEMORY USAGE of a done key
     * @param keyLength       length of the sampled Redis key names
     * @param sampled         keys measured
     */
    record Memory(double bytesPerKey, int keyLength, int sampled) {
    }

    private final RedissonClient redisson;

    MemoryBench(RedissonClient redisson) {
        this.redisson = redisson;
    }

    Memory run(int keys, int sample) {
        // A production-like key: prefix, group, topic and a business key.
        RedisClaimStore store = RedisClaimStore.builder(redisson).keyPrefix("idem:").build();
        List<IdempotencyKey> all = new ArrayList<>(keys);
        for (int i = 0; i < keys; i++) {
            all.add(new IdempotencyKey("inventory", "orders", String.format("order-%08d:deduct", i)));
        }
        for (int from = 0; from < keys; from += 500) {
            List<IdempotencyKey> batch = all.subList(from, Math.min(keys, from + 500));
            store.claim(batch.stream().map(k -> new ClaimRequest(k, 0)).toList(), "bench", Duration.ofSeconds(30));
            store.complete(batch, "bench");
        }
        long total = 0;
        int step = Math.max(1, keys / sample);
        int measured = 0;
        for (int i = 0; i < keys; i += step) {
            total += redisson.getBucket(store.redisKey(all.get(i))).sizeInMemory();
            measured++;
        }
        int keyLength = store.redisKey(all.get(0)).length();
        for (IdempotencyKey key : all) {
            store.reset(key);
        }
        return new Memory(total / (double) measured, keyLength, measured);
    }
}
