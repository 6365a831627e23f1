package dev.idem.redis;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimRecord;
import dev.idem.core.spi.ClaimRequest;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.ClaimStoreException;
import dev.idem.core.spi.FailureCount;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;
import org.redisson.api.RBatch;
import org.redisson.api.RFuture;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.RedisException;
import org.redisson.client.codec.StringCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Claim records in Redis (DESIGN §3): one short string per key (the one-byte {@code D} once
 * done), every change made by one Lua script, every time taken from Redis {@code TIME}. A fresh
 * claim costs Redis one {@code SET NX}, its completion one {@code SET GET}. Batches take one round
 * trip per Redis node; on a cluster their keys are grouped by hash slot. Thread-safe.
 *
 * <p>Needs Redis 6.2 or newer ({@code SET ... GET}, {@code KEEPTTL}). Redis must run with
 * {@code maxmemory-policy noeviction}: an evicted record is a lost claim. {@link Builder#build()}
 * warns when it is not.
 */
public final class RedisClaimStore implements ClaimStore {

    private static final Logger LOG = LoggerFactory.getLogger(RedisClaimStore.class);

    private final RedissonClient redisson;
    private final RScript script;
    private final String prefix;
    private final long doneWindowMillis;
    private final long attemptsWindowMillis;
    private final boolean cluster;
    // Free text is stored after this separator in a record; it must not appear inside the text.
    private static final char TEXT_SEPARATOR = '\u001f';
    private final String source;
    private volatile String sha;

    private RedisClaimStore(Builder b) {
        this.redisson = b.redisson;
        this.script = redisson.getScript(StringCodec.INSTANCE);
        this.prefix = b.keyPrefix;
        this.doneWindowMillis = b.doneWindow.toMillis();
        this.attemptsWindowMillis = b.attemptsWindow.toMillis();
        this.cluster = redisson.getConfig().isClusterConfig();
        this.source = read("claims.lua");
    }

    /**
     * A builder over an existing Redisson client (single server, sentinel or cluster). The client
     * stays the caller's to shut down.
     */
    public static Builder builder(RedissonClient redisson) {
        return new Builder(redisson);
    }

    /** The Redis key of an idempotency key: prefix, group, topic, value. */
    public String redisKey(IdempotencyKey key) {
        return prefix + key.group() + ':' + key.topic() + ':' + key.value();
    }

    @Override
    public List<Claim> claim(List<ClaimRequest> requests, String owner, Duration lease, boolean firm) {
        List<String> keys = requests.stream().map(r -> redisKey(r.key())).toList();
        List<Object> replies = evalGrouped(keys, group -> {
            List<Object> args = new ArrayList<>(List.of("claim", owner, Long.toString(lease.toMillis()), firm ? "1" : "0",
                    Long.toString(Math.max(attemptsWindowMillis, lease.toMillis() * 2))));
            group.forEach(i -> args.add(Integer.toString(requests.get(i).attemptFloor())));
            return args;
        });
        List<Claim> claims = new ArrayList<>(requests.size());
        for (int i = 0; i < requests.size(); i++) {
            claims.add(parseClaim(requests.get(i).key(), (String) replies.get(i)));
        }
        return claims;
    }

    private static Claim parseClaim(IdempotencyKey key, String reply) {
        String[] f = reply.split(":", -1);
        switch (f[0]) {
            case "D":
                return new Claim.Done(key);
            case "X":
                return new Claim.Dead(key);
            case "B":
                return new Claim.Busy(key, Duration.ofMillis(Long.parseLong(f[1])));
            case "C":
                return new Claim.Claimed(key, Long.parseLong(f[1]), Integer.parseInt(f[2]), Integer.parseInt(f[3]),
                        f[4].equals("1"), f[5].equals("1"),
                        f[6].isEmpty() ? Optional.empty() : Optional.of(Instant.ofEpochMilli(Long.parseLong(f[6]))));
            default:
                throw new ClaimStoreException("unexpected claim reply '" + reply + "' for " + key, null);
        }
    }

    @Override
    public boolean start(IdempotencyKey key, String owner) {
        return ((Number) evalOne(redisKey(key), RScript.ReturnType.INTEGER, "start", owner)).longValue() == 1;
    }

    @Override
    public Set<IdempotencyKey> renew(Collection<IdempotencyKey> keys, String owner, Duration lease) {
        return refused("renew", keys, owner, Long.toString(lease.toMillis()), "");
    }

    @Override
    public Set<IdempotencyKey> complete(Collection<IdempotencyKey> keys, String owner) {
        return refused("complete", keys, owner, Long.toString(doneWindowMillis), Long.toString(attemptsWindowMillis));
    }

    @Override
    public CompletableFuture<Set<IdempotencyKey>> completeAsync(Collection<IdempotencyKey> keys, String owner) {
        List<IdempotencyKey> ordered = List.copyOf(keys);
        List<String> redisKeys = ordered.stream().map(this::redisKey).toList();
        if (ordered.isEmpty() || cluster || sha == null) {
            // Cluster batches and a first call (script not loaded yet) take the synchronous path.
            return ClaimStore.super.completeAsync(keys, owner);
        }
        return script.<List<Object>>evalShaAsync(RScript.Mode.READ_WRITE, sha, RScript.ReturnType.MULTI,
                        new ArrayList<>(redisKeys), "complete", owner, Long.toString(doneWindowMillis),
                        Long.toString(attemptsWindowMillis))
                .toCompletableFuture()
                .handle((replies, error) -> {
                    // Runs on Redisson's event loop: no blocking call here. A NOSCRIPT (Redis restarted)
                    // is repaired by the next claim, which reloads the script.
                    if (error != null) {
                        throw new ClaimStoreException("Redis unavailable or failing: " + rootMessage(error), error);
                    }
                    Set<IdempotencyKey> refused = new HashSet<>();
                    for (int i = 0; i < ordered.size(); i++) {
                        if (((Number) replies.get(i)).longValue() != 1) {
                            refused.add(ordered.get(i));
                        }
                    }
                    return refused;
                });
    }

    private Set<IdempotencyKey> refused(String op, Collection<IdempotencyKey> keys, String owner, String arg,
                                        String arg2) {
        List<IdempotencyKey> ordered = List.copyOf(keys);
        List<Object> replies = evalGrouped(ordered.stream().map(this::redisKey).toList(),
                group -> List.of(op, owner, arg, arg2));
        Set<IdempotencyKey> refused = new HashSet<>();
        for (int i = 0; i < ordered.size(); i++) {
            if (((Number) replies.get(i)).longValue() != 1) {
                refused.add(ordered.get(i));
            }
        }
        return refused;
    }

    @Override
    public Optional<FailureCount> fail(IdempotencyKey key, String owner, String error) {
        String reply = evalOne(redisKey(key), RScript.ReturnType.VALUE, "fail", owner, text(error),
                Long.toString(attemptsWindowMillis));
        if (reply == null || reply.isEmpty()) {
            return Optional.empty();
        }
        String[] f = reply.split(":");
        return Optional.of(new FailureCount(Integer.parseInt(f[0]), Integer.parseInt(f[1]),
                Instant.ofEpochMilli(Long.parseLong(f[2]))));
    }

    @Override
    public void release(Collection<IdempotencyKey> keys, String owner) {
        List<String> redisKeys = keys.stream().map(this::redisKey).toList();
        evalGrouped(redisKeys, group -> List.of("release", owner));
    }

    @Override
    public boolean deadLetter(IdempotencyKey key, String owner, String error) {
        return ((Number) evalOne(redisKey(key), RScript.ReturnType.INTEGER, "dead", owner, text(error),
                Long.toString(doneWindowMillis))).longValue() == 1;
    }

    @Override
    public void recordCompensation(IdempotencyKey key, String outcome) {
        evalOne(redisKey(key), RScript.ReturnType.INTEGER, "compensated", text(outcome));
    }

    @Override
    public void reset(IdempotencyKey key) {
        try {
            redisson.getKeys().delete(redisKey(key));
        } catch (RedisException e) {
            throw new ClaimStoreException("Redis unavailable deleting " + key, e);
        }
    }

    @Override
    public Optional<ClaimRecord> inspect(IdempotencyKey key) {
        List<Object> reply = evalOne(redisKey(key), RScript.ReturnType.MULTI, "inspect");
        String value = (String) reply.get(0);
        Duration ttl = Duration.ofMillis(Math.max(0, Long.parseLong((String) reply.get(1))));
        if (value.isEmpty()) {
            return Optional.empty();
        }
        if (value.equals("D")) {
            return Optional.of(new ClaimRecord(ClaimRecord.State.DONE, Optional.empty(), 0, 0, 0, Optional.empty(),
                    Optional.empty(), ttl));
        }
        // s|owner|lease|fence|attempts|failures|t|ff \u001f error \u001f compensation
        String[] text = value.split(String.valueOf(TEXT_SEPARATOR), -1);
        String[] f = text[0].split("\\|", -1);
        ClaimRecord.State state = switch (f[0]) {
            case "C" -> ClaimRecord.State.CLAIMED;
            case "X" -> ClaimRecord.State.DEAD;
            default -> ClaimRecord.State.FAILED;
        };
        return Optional.of(new ClaimRecord(state, present(f[1]), Long.parseLong(f[3]), Integer.parseInt(f[4]),
                Integer.parseInt(f[5]), present(text[1]), present(text[2]), ttl));
    }

    private static Optional<String> present(String text) {
        return text.isEmpty() ? Optional.empty() : Optional.of(text);
    }

    /** Free text as it may be stored: without the record's separator. */
    private static String text(String text) {
        return text.replace(TEXT_SEPARATOR, ' ');
    }

    private <R> R evalOne(String key, RScript.ReturnType type, Object... args) {
        return withScripts(() -> script.evalSha(RScript.Mode.READ_WRITE, sha(), type, List.of(key), args));
    }

    /**
     * Runs a multi-key script once per hash-slot group (one group on a single server), pipelined in
     * one batch so each node gets one round trip; returns the per-key replies in key order.
     */
    private List<Object> evalGrouped(List<String> keys, Function<List<Integer>, List<Object>> args) {
        if (keys.isEmpty()) {
            return List.of();
        }
        List<List<Integer>> groups = groups(keys);
        return withScripts(() -> {
            List<Object> replies = new ArrayList<>(keys.size());
            for (int i = 0; i < keys.size(); i++) {
                replies.add(null);
            }
            if (groups.size() == 1) {
                List<Object> reply = script.evalSha(RScript.Mode.READ_WRITE, sha(), RScript.ReturnType.MULTI,
                        new ArrayList<>(keys), args.apply(groups.get(0)).toArray());
                scatter(groups.get(0), reply, replies);
                return replies;
            }
            RBatch batch = redisson.createBatch();
            List<RFuture<List<Object>>> futures = new ArrayList<>(groups.size());
            for (List<Integer> group : groups) {
                List<Object> groupKeys = group.stream().map(keys::get).map(Object.class::cast).toList();
                futures.add(batch.getScript(StringCodec.INSTANCE).evalShaAsync(RScript.Mode.READ_WRITE, sha(),
                        RScript.ReturnType.MULTI, groupKeys, args.apply(group).toArray()));
            }
            batch.execute();
            for (int g = 0; g < groups.size(); g++) {
                scatter(groups.get(g), futures.get(g).toCompletableFuture().join(), replies);
            }
            return replies;
        });
    }

    private static void scatter(List<Integer> group, List<Object> reply, List<Object> replies) {
        for (int j = 0; j < group.size(); j++) {
            replies.set(group.get(j), reply.get(j));
        }
    }

    private List<List<Integer>> groups(List<String> keys) {
        if (!cluster) {
            List<Integer> all = new ArrayList<>(keys.size());
            for (int i = 0; i < keys.size(); i++) {
                all.add(i);
            }
            return List.of(all);
        }
        Map<Integer, List<Integer>> bySlot = new LinkedHashMap<>();
        for (int i = 0; i < keys.size(); i++) {
            bySlot.computeIfAbsent(Slots.of(keys.get(i)), slot -> new ArrayList<>()).add(i);
        }
        return List.copyOf(bySlot.values());
    }

    /** Runs a Redis call; reloads the scripts once if Redis lost them; maps client errors. */
    private <R> R withScripts(java.util.function.Supplier<R> call) {
        try {
            try {
                return call.get();
            } catch (RedisException | CompletionException e) {
                if (!String.valueOf(rootMessage(e)).contains("NOSCRIPT")) {
                    throw e;
                }
                loadScripts();
                return call.get();
            }
        } catch (RedisException | CompletionException e) {
            throw new ClaimStoreException("Redis unavailable or failing: " + rootMessage(e), e);
        }
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getMessage() == null ? e.getMessage() : t.getMessage();
    }

    private String sha() {
        String current = sha;
        if (current == null) {
            loadScripts();
            current = sha;
        }
        return current;
    }

    private synchronized void loadScripts() {
        // On a cluster, Redisson loads the script on every master.
        sha = script.scriptLoad(source);
    }

    private static String read(String resource) {
        try (InputStream in = RedisClaimStore.class.getResourceAsStream(resource)) {
            return new String(Objects.requireNonNull(in, resource).readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + resource, e);
        }
    }

    private void warnUnlessNoEviction() {
        try {
            List<Map<String, String>> configs = new ArrayList<>();
            if (cluster) {
                redisson.getRedisNodes(org.redisson.api.redisnode.RedisNodes.CLUSTER).getMasters()
                        .forEach(m -> configs.add(m.getConfig("maxmemory-policy")));
            } else if (redisson.getConfig().isSingleConfig()) {
                configs.add(redisson.getRedisNodes(org.redisson.api.redisnode.RedisNodes.SINGLE).getInstance()
                        .getConfig("maxmemory-policy"));
            }
            for (Map<String, String> config : configs) {
                String policy = config.get("maxmemory-policy");
                if (policy != null && !policy.equals("noeviction")) {
                    LOG.warn("Redis maxmemory-policy is '{}', not 'noeviction': Redis may evict claim records, "
                            + "and the business check alone will then stand between a redelivery and a second effect",
                            policy);
                }
            }
        } catch (RuntimeException e) {
            LOG.info("could not read Redis maxmemory-policy ({}); make sure it is 'noeviction'", e.getMessage());
        }
    }

    /** Builds a {@link RedisClaimStore}; validates on {@link #build()}. Not thread-safe. */
    public static final class Builder {

        private final RedissonClient redisson;
        private String keyPrefix = "idem:";
        // DESIGN §3: done and dead records are remembered for 7 days, the dedup window.
        private Duration doneWindow = Duration.ofDays(7);
        // Failure counts live a day: a message failing less often than that is retried afresh.
        private Duration attemptsWindow = Duration.ofDays(1);

        private Builder(RedissonClient redisson) {
            this.redisson = Objects.requireNonNull(redisson, "redisson");
        }

        /** Prefix of every Redis key. Default {@code idem:}. */
        public Builder keyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
            return this;
        }

        /** How long done and dead-lettered keys are remembered. Default 7 days. */
        public Builder doneWindow(Duration doneWindow) {
            this.doneWindow = doneWindow;
            return this;
        }

        /** How long attempt and failure counts are kept. Default 1 day. */
        public Builder attemptsWindow(Duration attemptsWindow) {
            this.attemptsWindow = attemptsWindow;
            return this;
        }

        /**
         * Builds the store, loads its scripts and warns if Redis may evict keys.
         *
         * @throws IllegalArgumentException naming a wrong setting
         * @throws ClaimStoreException      if Redis cannot be reached
         */
        public RedisClaimStore build() {
            if (keyPrefix == null) {
                throw new IllegalArgumentException("keyPrefix must not be null");
            }
            if (doneWindow == null || doneWindow.toMillis() < 1000) {
                throw new IllegalArgumentException("doneWindow must be >= 1s but was " + doneWindow);
            }
            if (attemptsWindow == null || attemptsWindow.toMillis() < 1000) {
                throw new IllegalArgumentException("attemptsWindow must be >= 1s but was " + attemptsWindow);
            }
            RedisClaimStore store = new RedisClaimStore(this);
            store.withScripts(() -> {
                store.loadScripts();
                return null;
            });
            store.warnUnlessNoEviction();
            return store;
        }
    }
}
