package dev.idem.redis;

import dev.idem.core.spi.ClaimStoreException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.BiFunction;
import org.jspecify.annotations.Nullable;
import org.redisson.RedissonShutdownException;
import org.redisson.api.BatchOptions;
import org.redisson.api.RBatch;
import org.redisson.api.RFuture;
import org.redisson.api.RScript;
import org.redisson.api.RScriptAsync;
import org.redisson.api.RedissonClient;
import org.redisson.api.options.OptionalOptions;
import org.redisson.client.RedisConnectionException;
import org.redisson.client.RedisException;
import org.redisson.client.RedisNodeNotFoundException;
import org.redisson.client.RedisReconnectedException;
import org.redisson.client.RedisTimeoutException;
import org.redisson.client.codec.StringCodec;

/**
 * Runs the claim script: loads it, reloads it when Redis lost it ({@code NOSCRIPT}), groups a
 * batch's keys by cluster hash slot so that each node gets one round trip, and maps client errors
 * to {@link ClaimStoreException}. Knows nothing of the record format. Thread-safe.
 */
final class RedisScripts {

    private final RedissonClient redisson;
    private final RScript script;
    // For calls that report each slot's outcome: not retried by the client, whose retry of a call
    // it already reported failed could claim keys after the caller released them.
    private final RScript once;
    private final String source;
    private final boolean cluster;
    private volatile @Nullable String sha;

    RedisScripts(RedissonClient redisson, String resource) {
        this.redisson = redisson;
        this.script = redisson.getScript(StringCodec.INSTANCE);
        this.once = redisson.getScript(OptionalOptions.defaults().codec(StringCodec.INSTANCE).retryAttempts(0));
        this.cluster = redisson.getConfig().isClusterConfig();
        this.source = read(resource);
    }

    boolean cluster() {
        return cluster;
    }

    /** Loads the script now (on every master of a cluster). */
    void load() {
        map(() -> {
            sha = script.scriptLoad(source);
            return null;
        });
    }

    /** One call on one key. */
    <R> R one(String key, RScript.ReturnType type, Object... args) {
        return map(() -> {
            try {
                return script.evalSha(RScript.Mode.READ_WRITE, sha(), type, List.of(key), args);
            } catch (RedisException e) {
                if (!isNoScript(e)) {
                    throw e;
                }
                load();
                return script.evalSha(RScript.Mode.READ_WRITE, sha(), type, List.of(key), args);
            }
        });
    }

    /** {@link #manyAsync}, waited for. */
    List<Object> many(List<String> keys, BiFunction<Integer, List<Integer>, Extra> args) {
        try {
            return manyAsync(keys, args).join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof ClaimStoreException failure) {
                throw failure;
            }
            throw new ClaimStoreException("Redis unavailable or failing: " + rootMessage(e), e);
        }
    }

    /**
     * What a call on one slot group adds to its keys and arguments.
     *
     * @param keys extra keys after the group's own (they must hash to the group's slot)
     * @param args the arguments
     */
    record Extra(List<String> keys, List<Object> args) {
    }

    /**
     * Runs a multi-key call once per hash-slot group (one group on a single server), pipelined so each
     * node gets one round trip, and returns the per-key replies in key order. {@code args} gets the
     * group's slot (-1 on a single server) and the indexes of its keys. Never blocks the caller; a
     * {@code NOSCRIPT} reloads the script and retries once.
     */
    CompletableFuture<List<Object>> manyAsync(List<String> keys, BiFunction<Integer, List<Integer>, Extra> args) {
        if (keys.isEmpty()) {
            return CompletableFuture.completedFuture(List.of());
        }
        Map<Integer, List<Integer>> groups = groups(keys);
        return attempt(keys, groups, args)
                .exceptionallyCompose(error -> {
                    if (!isNoScript(error)) {
                        return CompletableFuture.failedFuture(error);
                    }
                    return script.scriptLoadAsync(source).toCompletableFuture()
                            .thenCompose(loaded -> {
                                sha = loaded;
                                return attempt(keys, groups, args);
                            });
                })
                .handle((replies, error) -> {
                    if (error != null) {
                        throw new ClaimStoreException("Redis unavailable or failing: " + rootMessage(error), error);
                    }
                    return replies;
                });
    }

    /**
     * A slot group's call that failed, in place of each of its keys' replies ({@link #each}).
     *
     * @param cause why
     * @param known  whether the call is known to have failed (Redis refused it), rather than its reply
     *               missing: a call whose reply is missing may have run
     */
    record Failed(Throwable cause, boolean known) {
        /**
         * A call that failed with {@code cause}: known only when Redis answered with an error reply. A
         * timeout, a connection lost or a node not found leaves the reply missing, and the call may
         * still run (a paused or slow Redis runs it later), so it is not known to have failed.
         */
        static Failed of(Throwable cause) {
            return new Failed(cause, replied(cause));
        }

        /**
         * The call's reply is missing because Redis refused another call of its batch with an error
         * reply: Redis answers, so the call may be tried again at once.
         */
        boolean refusedElsewhere() {
            return !known && replied(cause);
        }

        /** Redis refused a multi-key call on a slot being migrated (some of its keys missing there). */
        boolean tryAgain() {
            return known && String.valueOf(rootMessage(cause)).startsWith("TRYAGAIN");
        }
    }

    /**
     * {@link #manyAsync}, except that each slot group's call succeeds or fails on its own: a failed
     * group's keys get a {@link Failed} reply, the others theirs, so the caller knows which keys its
     * call changed. Waited for.
     *
     * @throws ClaimStoreException when no call could be made
     */
    List<Object> each(List<String> keys, BiFunction<Integer, List<Integer>, Extra> args) {
        Map<Integer, List<Integer>> groups = groups(keys);
        try {
            List<Object> replies = attempt(keys, groups, args, true).join();
            if (replies.stream().noneMatch(r -> r instanceof Failed f && isNoScript(f.cause()))) {
                return replies;
            }
            load();
            return attempt(keys, groups, args, true).join();
        } catch (CompletionException e) {
            throw new ClaimStoreException("Redis unavailable or failing: " + rootMessage(e), e);
        }
    }

    private CompletableFuture<List<Object>> attempt(List<String> keys, Map<Integer, List<Integer>> groups,
                                                    BiFunction<Integer, List<Integer>, Extra> args) {
        return attempt(keys, groups, args, false);
    }

    private CompletableFuture<List<Object>> attempt(List<String> keys, Map<Integer, List<Integer>> groups,
                                                    BiFunction<Integer, List<Integer>, Extra> args,
                                                    boolean eachOnItsOwn) {
        String current;
        try {
            current = sha();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        List<Object> replies = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            replies.add(null);
        }
        if (groups.size() == 1) {
            Map.Entry<Integer, List<Integer>> group = groups.entrySet().iterator().next();
            CompletableFuture<List<Object>> one = call(eachOnItsOwn ? once : script, current, keys, group.getKey(),
                    group.getValue(), args).toCompletableFuture();
            return eachOnItsOwn ? one.handle((reply, error) -> error == null ? scatter(group.getValue(), reply, replies)
                    : fill(group.getValue(), Failed.of(error), replies))
                    : one.thenApply(reply -> scatter(group.getValue(), reply, replies));
        }
        RBatch batch = eachOnItsOwn ? redisson.createBatch(BatchOptions.defaults().retryAttempts(0))
                : redisson.createBatch();
        RScriptAsync batched = batch.getScript(StringCodec.INSTANCE);
        List<CompletableFuture<List<Object>>> calls = new ArrayList<>();
        List<List<Integer>> order = new ArrayList<>();
        groups.forEach((slot, group) -> {
            calls.add(call(batched, current, keys, slot, group, args).toCompletableFuture());
            order.add(group);
        });
        if (!eachOnItsOwn) {
            return batch.executeAsync().toCompletableFuture().thenApply(done -> {
                for (int g = 0; g < calls.size(); g++) {
                    scatter(order.get(g), calls.get(g).join(), replies);
                }
                return replies;
            });
        }
        return batch.executeAsync().toCompletableFuture().handle((done, batchError) -> {
            for (int g = 0; g < calls.size(); g++) {
                CompletableFuture<List<Object>> call = calls.get(g);
                if (call.isDone() && !call.isCompletedExceptionally()) {
                    scatter(order.get(g), call.join(), replies);
                } else if (call.isDone()) {
                    fill(order.get(g), Failed.of(call.handle((reply, error) -> error).join()), replies);
                } else {
                    // The batch failed on another node before this call's reply came: it may have run.
                    fill(order.get(g), new Failed(batchError, false), replies);
                }
            }
            return replies;
        });
    }

    /** Whether Redis answered the call with an error reply, so the call did not run. */
    static boolean replied(Throwable error) {
        boolean reply = false;
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof RedisTimeoutException || t instanceof RedisConnectionException
                    || t instanceof RedisReconnectedException || t instanceof RedisNodeNotFoundException
                    || t instanceof RedissonShutdownException) {
                return false;   // anywhere in the chain: the reply may be missing
            }
            reply |= t instanceof RedisException;
        }
        return reply;   // nothing from Redis (cancelled, interrupted): nothing says the call did not run
    }

    private static List<Object> fill(List<Integer> group, Failed failed, List<Object> replies) {
        group.forEach(i -> replies.set(i, failed));
        return replies;
    }

    private static RFuture<List<Object>> call(RScriptAsync on, String sha, List<String> keys, int slot, List<Integer> group,
                                              BiFunction<Integer, List<Integer>, Extra> args) {
        Extra extra = args.apply(slot, group);
        List<Object> groupKeys = new ArrayList<>(group.size() + extra.keys().size());
        group.forEach(i -> groupKeys.add(keys.get(i)));
        groupKeys.addAll(extra.keys());
        return on.evalShaAsync(RScript.Mode.READ_WRITE, sha, RScript.ReturnType.MULTI, groupKeys,
                extra.args().toArray());
    }

    /**
     * Puts a call's per-key replies in their keys' places. A call of several keys may answer with
     * one string, its keys' replies joined by {@value #JOINED} (one string to decode instead of one
     * per key).
     */
    private static List<Object> scatter(List<Integer> group, List<Object> reply, List<Object> replies) {
        List<Object> each = reply.size() == 1 && group.size() > 1 && reply.get(0) instanceof String joined
                ? split(joined, group.size()) : reply;
        for (int j = 0; j < group.size(); j++) {
            replies.set(group.get(j), each.get(j));
        }
        return replies;
    }

    /** What joins the replies of a call answered with one string. */
    static final char JOINED = '\u001e';

    private static List<Object> split(String joined, int expected) {
        List<Object> parts = new ArrayList<>(expected);
        int from = 0;
        for (int at = joined.indexOf(JOINED); ; at = joined.indexOf(JOINED, from)) {
            int to = at < 0 ? joined.length() : at;
            // The usual replies of a claim, one character each, are shared, not copied.
            char first = to > from ? joined.charAt(from) : 0;
            parts.add(to - from == 1 && first < ONE_CHARACTER.length ? ONE_CHARACTER[first] : joined.substring(from, to));
            if (at < 0) {
                break;
            }
            from = at + 1;
        }
        if (parts.size() != expected) {
            throw new ClaimStoreException("a call of " + expected + " keys answered " + parts.size() + " replies", null);
        }
        return parts;
    }

    private static final String[] ONE_CHARACTER = new String[128];

    static {
        for (char c = 0; c < 128; c++) {
            ONE_CHARACTER[c] = String.valueOf(c);
        }
    }

    private Map<Integer, List<Integer>> groups(List<String> keys) {
        Map<Integer, List<Integer>> bySlot = new LinkedHashMap<>();
        for (int i = 0; i < keys.size(); i++) {
            bySlot.computeIfAbsent(cluster ? Slots.of(keys.get(i)) : -1, slot -> new ArrayList<>()).add(i);
        }
        return bySlot;
    }

    private String sha() {
        String current = sha;
        if (current == null) {
            load();
            current = Objects.requireNonNull(sha, "the script loaded");
        }
        return current;
    }

    private static <R> R map(java.util.function.Supplier<R> call) {
        try {
            return call.get();
        } catch (RedisException | CompletionException e) {
            throw new ClaimStoreException("Redis unavailable or failing: " + rootMessage(e), e);
        }
    }

    private static boolean isNoScript(Throwable error) {
        return String.valueOf(rootMessage(error)).contains("NOSCRIPT");
    }

    static @Nullable String rootMessage(Throwable e) {
        Throwable t = e;
        // The deepest cause, each visited once: a cause chain may loop.
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        while (seen.add(t) && t.getCause() != null && !seen.contains(t.getCause())) {
            t = t.getCause();
        }
        return t.getMessage() == null ? e.getMessage() : t.getMessage();
    }

    private static String read(String resource) {
        try (InputStream in = RedisScripts.class.getResourceAsStream(resource)) {
            return new String(Objects.requireNonNull(in, resource).readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + resource, e);
        }
    }
}
