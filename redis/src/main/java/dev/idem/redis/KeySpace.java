package dev.idem.redis;

import dev.idem.core.IdempotencyKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a claim store's records live in Redis: the names of its keys under one prefix (a key's
 * record; per slot group the epoch, the batch records and the pending-compensation index), the way
 * back from a name to its key, and the arguments every script operation ends with. Immutable.
 */
final class KeySpace {

    private static final Logger LOG = LoggerFactory.getLogger(RedisClaimStore.class);

    private final String prefix;
    private final boolean cluster;
    private final long attemptsWindowMillis;

    KeySpace(String prefix, boolean cluster, long attemptsWindowMillis) {
        this.prefix = prefix;
        this.cluster = cluster;
        this.attemptsWindowMillis = attemptsWindowMillis;
    }

    String prefix() {
        return prefix;
    }

    /**
     * The Redis key of an idempotency key: prefix, group, topic, value, joined with ':'. A ':' or '%'
     * in the group or topic is written {@code %3A} or {@code %25}, so no two keys share a name.
     */
    String of(IdempotencyKey key) {
        return prefix + escape(key.group()) + ':' + escape(key.topic()) + ':' + key.value();
    }

    /** What every Redis key of a group starts with. */
    String groupPrefix(String group) {
        return prefix + escape(group) + ':';
    }

    /** The key a Redis key of the group names, if it names one. */
    Optional<IdempotencyKey> keyOf(String group, String name) {
        String groupPrefix = groupPrefix(group);
        if (!name.startsWith(groupPrefix)) {
            return Optional.empty();
        }
        String rest = name.substring(groupPrefix.length());
        int colon = rest.indexOf(':');
        if (colon < 0) {
            return Optional.empty();
        }
        try {
            return Optional.of(new IdempotencyKey(group, unescape(rest.substring(0, colon)), rest.substring(colon + 1)));
        } catch (IllegalArgumentException e) {
            LOG.warn("skipping Redis key {}: {}", name, e.getMessage());
            return Optional.empty();
        }
    }

    /** The hash slot of a Redis key on a cluster; -1 (one slot group) on a single server. */
    int slotOf(String redisKey) {
        return cluster ? Slots.of(redisKey) : -1;
    }

    /** The epoch key of a slot group: in the group's slot on a cluster, one key on a single server. */
    String epochKey(int slot) {
        return prefix + "epoch" + tag(slot);
    }

    /** The prefix of a slot group's batch records. */
    String batchPrefix(int slot) {
        return prefix + "batch" + tag(slot) + ":";
    }

    /** The index of a slot group's pending compensations: in the group's slot on a cluster. */
    String pendingKey(int slot) {
        return prefix + "pending" + tag(slot);
    }

    /**
     * An operation's arguments, ended as every operation's are: pending-compensation index, attempts
     * window, batch prefix.
     */
    List<Object> args(int slot, Object... args) {
        List<Object> all = new ArrayList<>(args.length + 3);
        all.addAll(List.of(args));
        all.add(pendingKey(slot));
        all.add(Long.toString(attemptsWindowMillis));
        all.add(batchPrefix(slot));
        return all;
    }

    private static String tag(int slot) {
        return slot < 0 ? "" : Slots.tag(slot);
    }

    private static String escape(String part) {
        if (part.indexOf(':') < 0 && part.indexOf('%') < 0) {
            return part;
        }
        return part.replace("%", "%25").replace(":", "%3A");
    }

    private static String unescape(String part) {
        if (part.indexOf('%') < 0) {
            return part;
        }
        return part.replace("%3A", ":").replace("%25", "%");
    }
}
