package dev.idem.benchmarks.soak;

import dev.idem.testkit.LocalRedisCluster;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The soak's Redis as a Cluster of three masters. Its fault is a live reshard: a block of slots
 * moves to the next master, slot by slot, the keys of each going over 20 at a time while claims flow
 * (clients meet ASK and TRYAGAIN replies), as {@code redis-cli --cluster reshard} does. Nothing is
 * lost. Not thread-safe: the chaos loop alone drives it (the move runs on a thread of its own).
 */
final class ClusterRedis implements SoakRedis {

    private static final int MASTERS = 3;
    private static final int SLOTS = 16_384;
    // Slots moved per reshard: the soak's keys spread over every slot, so a block catches live ones. A
    // sixteenth of the slots moves some hundreds of keys in a few seconds (128 slots moved 8 to 73).
    private static final int BLOCK = 1_024;
    private static final int KEYS_AT_ONCE = 20;

    private final LocalRedisCluster cluster;
    private CompletableFuture<String> moving;
    private int reshards;

    ClusterRedis(Path dir) {
        this.cluster = LocalRedisCluster.start(dir, MASTERS);
    }

    @Override
    public String url() {
        return "redis-cluster://" + String.join(",", cluster.nodeAddresses().stream()
                .map(address -> address.substring("redis://".length())).toList());
    }

    @Override
    public String fault(Random random) {
        if (moving != null) {
            return "a reshard already under way";
        }
        int first = random.nextInt(SLOTS / BLOCK) * BLOCK;
        reshards++;
        moving = CompletableFuture.supplyAsync(() -> move(first));
        return String.format("reshard: slots %d-%d move to the next master, keys %d at a time", first,
                first + BLOCK - 1, KEYS_AT_ONCE);
    }

    private String move(int first) {
        int keys = 0;
        long started = System.nanoTime();
        try {
            for (int slot = first; slot < first + BLOCK; slot++) {
                int from = cluster.ownerOf(slot);
                int to = (from + 1) % MASTERS;
                cluster.beginMigration(slot, from, to);
                List<String> left = cluster.keysInSlot(from, slot);
                while (!left.isEmpty()) {
                    for (int at = 0; at < left.size(); at += KEYS_AT_ONCE) {
                        List<String> some = left.subList(at, Math.min(left.size(), at + KEYS_AT_ONCE));
                        cluster.migrate(from, to, some.toArray(String[]::new));
                        keys += some.size();
                        TimeUnit.MILLISECONDS.sleep(5);
                    }
                    left = cluster.keysInSlot(from, slot);
                }
                cluster.finishMigration(slot, to);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return String.format("reshard of slots %d-%d done in %d ms, %d keys migrated under live claims", first,
                first + BLOCK - 1, (System.nanoTime() - started) / 1_000_000, keys);
    }

    @Override
    public String heal() throws Exception {
        if (moving == null || !moving.isDone()) {
            return null;
        }
        String done = moving.get();
        moving = null;
        return done;
    }

    @Override
    public boolean underWay() {
        return moving != null;
    }

    @Override
    public int faults() {
        return reshards;
    }

    @Override
    public String faultName() {
        return "live reshards (slots moved under load)";
    }

    @Override
    public List<Loss> losses() {
        return List.of();
    }

    @Override
    public void close() {
        cluster.close();
    }
}
