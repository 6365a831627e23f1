package dev.idem.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimRecord;
import dev.idem.core.spi.ClaimRequest;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.RedisEndpoint;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * Compact claims and their batch records (decision 0033): a batch completed together costs one
 * write, and that write never stands for a key that is still running, failed, released or taken
 * over. The general contract runs in {@link RedisClaimStoreIT} and on a cluster.
 */
@IdemTestKit
class CompactClaimsIT {

    private static final Duration LEASE = Duration.ofSeconds(30);
    private static RedissonClient redisson;
    private String prefix;
    private RedisClaimStore store;

    @BeforeAll
    static void connect(RedisEndpoint redis) {
        redisson = TestRedisson.connect(redis);
    }

    @AfterAll
    static void disconnect() {
        redisson.shutdown();
    }

    @BeforeEach
    void freshStore() {
        prefix = "idem-test:" + UUID.randomUUID() + ":";
        store = newStore();
    }

    private RedisClaimStore newStore() {
        return RedisClaimStore.builder(redisson).keyPrefix(prefix).build();
    }

    private static IdempotencyKey key(String value) {
        return new IdempotencyKey("inventory", "orders", value);
    }

    private Claim claimOne(String value, String owner) {
        return store.claim(List.of(new ClaimRequest(key(value), 0)), owner, LEASE).get(0);
    }

    private String value(IdempotencyKey key) {
        return redisson.<String>getBucket(store.redisKey(key), StringCodec.INSTANCE).get();
    }

    private long memoryUsage(String redisKey) {
        return redisson.getScript(StringCodec.INSTANCE).eval(RScript.Mode.READ_ONLY,
                "return redis.call('MEMORY', 'USAGE', KEYS[1], 'SAMPLES', 0)", RScript.ReturnType.INTEGER,
                List.of(redisKey));
    }

    /** order-1 ... order-n, claimed by {@code owner} in one call. */
    private List<IdempotencyKey> batch(String owner, Duration lease, int n) {
        List<IdempotencyKey> keys = IntStream.rangeClosed(1, n).mapToObj(i -> key("order-" + i)).toList();
        store.claim(keys.stream().map(k -> new ClaimRequest(k, 0)).toList(), owner, lease);
        return keys;
    }

    /** The batch record a compact value names. */
    private String record(String compact) {
        return prefix + "batch:" + compact.substring(1, 1 + BatchIds.LENGTH);
    }

    private String text(String redisKey) {
        return redisson.<String>getBucket(redisKey, StringCodec.INSTANCE).get();
    }

    private static List<IdempotencyKey> without(List<IdempotencyKey> keys, IdempotencyKey... left) {
        return keys.stream().filter(k -> !List.of(left).contains(k)).toList();
    }

    @Test
    void aBatchCompletedTogetherIsOneWriteAndItsKeysStayAsSmallAsADoneKey() {
        List<IdempotencyKey> keys = batch("a", LEASE, 8);
        String compact = value(keys.get(0));

        assertThat(store.complete(keys, "a")).isEmpty();

        // The keys were not written: each still names its batch, and the batch record says done.
        assertThat(compact).hasSize(12).startsWith("b");
        for (int i = 0; i < keys.size(); i++) {
            IdempotencyKey key = keys.get(i);
            assertThat(value(key)).isEqualTo(compact.substring(0, 10) + CompactClaims.placeText(i));
            assertThat(claimOne(key.value(), "b")).isInstanceOf(Claim.Done.class);
            assertThat(store.inspect(key).orElseThrow().state()).isEqualTo(ClaimRecord.State.DONE);
        }
        // As small as a one-byte done record, and remembered at least the done window.
        String reference = store.redisKey(key("order-9"));
        redisson.getBucket(reference, StringCodec.INSTANCE).set("D");
        assertThat(memoryUsage(store.redisKey(keys.get(0)))).isLessThanOrEqualTo(memoryUsage(reference));
        long keyTtl = redisson.getBucket(store.redisKey(keys.get(0))).remainTimeToLive();
        assertThat(keyTtl).isGreaterThan(Duration.ofDays(7).toMillis());
        assertThat(redisson.getBucket(record(compact)).remainTimeToLive()).isGreaterThan(keyTtl);
    }

    /**
     * Copies claimed in one call (the next poll of a consumer that consumes every order three
     * times): each key costs the one SET NX, which on Redis 7.0 or newer also reads what it found,
     * and the batch records they name are read once per call, not once per key.
     */
    @Test
    void aClaimOfCopiesReadsEachKeyWithItsSetAndEachBatchRecordOncePerCall() throws Exception {
        try (OwnRedisServer server = OwnRedisServer.start()) {
            RedissonClient client = server.client();
            try {
                RedisClaimStore own = RedisClaimStore.builder(client).keyPrefix(prefix).build();
                List<ClaimRequest> requests = IntStream.rangeClosed(1, 40)
                        .mapToObj(i -> new ClaimRequest(key("order-" + i), 0)).toList();
                List<IdempotencyKey> keys = requests.stream().map(ClaimRequest::key).toList();
                own.claim(requests.subList(0, 20), "a", LEASE);
                own.claim(requests.subList(20, 40), "a", LEASE);
                assertThat(own.complete(keys, "a")).isEmpty();
                Map<String, Long> before = calls(client);

                List<Claim> copies = own.claim(requests, "b", LEASE);

                assertThat(copies).allMatch(claim -> claim instanceof Claim.Done);
                Map<String, Long> after = calls(client);
                long sets = after.getOrDefault("set", 0L) - before.getOrDefault("set", 0L);
                long gets = after.getOrDefault("get", 0L) - before.getOrDefault("get", 0L);
                String version = client.getRedisNodes(org.redisson.api.redisnode.RedisNodes.SINGLE).getInstance()
                        .info(org.redisson.api.redisnode.RedisNode.InfoSection.SERVER).get("redis_version");
                // A SET NX per key, and one for the call's own batch record (unused, then deleted).
                assertThat(sets).isEqualTo(41);
                if (Integer.parseInt(version.split("\\.")[0]) >= 7) {
                    // The store's epoch and the two batch records the copies name.
                    assertThat(gets).as("GETs on Redis %s", version).isLessThanOrEqualTo(3);
                } else {
                    assertThat(gets).as("GETs on Redis %s", version).isLessThanOrEqualTo(43);
                }
            } finally {
                client.shutdown();
            }
        }
    }

    /** Lets the given milliseconds pass: Redis's TIME moves on past a claim's own millisecond. */
    private static void millisecondsPass(long millis) throws InterruptedException {
        TimeUnit.MILLISECONDS.sleep(millis);
    }

    /** Redis's calls of each command so far (INFO commandstats), by command name. */
    private static Map<String, Long> calls(RedissonClient client) {
        Map<String, String> stats = client.getRedisNodes(org.redisson.api.redisnode.RedisNodes.SINGLE).getInstance()
                .info(org.redisson.api.redisnode.RedisNode.InfoSection.COMMANDSTATS);
        Map<String, Long> calls = new HashMap<>();
        stats.forEach((name, value) -> calls.put(name.replace("cmdstat_", ""),
                Long.parseLong(value.replaceAll("^calls=(\\d+),.*$", "$1"))));
        return calls;
    }

    @Test
    void aCallWithFewKeysInASlotWritesFullRecords() {
        List<IdempotencyKey> keys = batch("a", LEASE, RedisClaimStore.MIN_COMPACT_BATCH - 1);

        assertThat(value(keys.get(0))).startsWith("C|a|");
        assertThat(store.complete(keys, "a")).isEmpty();
        assertThat(value(keys.get(0))).isEqualTo("D");
        assertThat(redisson.getKeys().getKeysStreamByPattern(prefix + "batch*").count()).isZero();
    }

    @Test
    void aBatchCompletionNeverCoversAKeyStillRunning() {
        List<IdempotencyKey> keys = batch("a", LEASE, 8);
        IdempotencyKey running = keys.get(7);

        // All but one finished: their places are marked in the batch record, the last stays held.
        assertThat(store.complete(without(keys, running), "a")).isEmpty();

        assertThat(claimOne("order-1", "b")).isInstanceOf(Claim.Done.class);
        assertThat(claimOne(running.value(), "b")).isInstanceOf(Claim.Busy.class);
        assertThat(store.inspect(running).orElseThrow().state()).isEqualTo(ClaimRecord.State.CLAIMED);
        assertThat(store.inspect(keys.get(0)).orElseThrow().state()).isEqualTo(ClaimRecord.State.DONE);
    }

    /** Decision 0058: a batch completing on the way (a completion timer round) costs one write, not one per key. */
    @Test
    void keysCompletingBeforeTheRestOfTheirBatchAreMarkedByOneWriteToItsRecord() {
        List<IdempotencyKey> keys = batch("a", LEASE, 8);
        String compact = value(keys.get(0));

        assertThat(store.complete(keys.subList(0, 3), "a")).isEmpty();
        assertThat(store.complete(keys.subList(3, 6), "a")).isEmpty();

        // No key was written: each still names its batch and place, and the record marks six places.
        for (IdempotencyKey key : keys) {
            assertThat(value(key)).hasSize(12).startsWith(compact.substring(0, 1 + BatchIds.LENGTH));
        }
        assertThat(text(record(compact))).startsWith("L|a|").endsWith("|f3");
        assertThat(claimOne("order-3", "b")).isInstanceOf(Claim.Done.class);
        assertThat(claimOne("order-6", "b")).isInstanceOf(Claim.Done.class);
        assertThat(claimOne("order-7", "b")).isInstanceOf(Claim.Busy.class);

        // The last two complete the batch whole: one write, every key done.
        assertThat(store.complete(keys.subList(6, 8), "a")).isEmpty();
        assertThat(text(record(compact))).startsWith("D|");
        assertThat(value(keys.get(7))).endsWith(CompactClaims.placeText(7));
        assertThat(claimOne("order-8", "b")).isInstanceOf(Claim.Done.class);
    }

    @Test
    void keysMarkedDoneStayDoneWhenTheirBatchIsTakenOverAndTheTakenKeyIsRefusedToItsOldOwner() {
        List<IdempotencyKey> keys = batch("a", Duration.ofMillis(300), 8);
        assertThat(store.complete(keys.subList(0, 4), "a")).isEmpty();

        // The owner pauses: its lease ends and b takes a running key over.
        Claim takeover = await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(25))
                .until(() -> claimOne("order-5", "b"), c -> c instanceof Claim.Claimed);
        assertThat(((Claim.Claimed) takeover).abandoned()).isTrue();
        assertThat(claimOne("order-2", "b")).as("marked before the takeover").isInstanceOf(Claim.Done.class);

        // The old owner resumes and completes the rest: the taken key is refused, the others done.
        assertThat(store.complete(keys.subList(4, 8), "a")).containsExactly(key("order-5"));

        assertThat(store.inspect(key("order-5")).orElseThrow().owner()).contains("b");
        assertThat(claimOne("order-6", "c")).isInstanceOf(Claim.Done.class);
        assertThat(claimOne("order-1", "c")).isInstanceOf(Claim.Done.class);
    }

    @Test
    void aMarkedKeyReadsAsDoneForAsLongAsTheKeyLives() {
        List<IdempotencyKey> keys = batch("a", LEASE, 8);

        store.complete(keys.subList(0, 1), "a");

        ClaimRecord record = store.inspect(keys.get(0)).orElseThrow();
        assertThat(record.state()).isEqualTo(ClaimRecord.State.DONE);
        assertThat(redisson.getBucket(store.redisKey(keys.get(0))).remainTimeToLive())
                .isGreaterThan(Duration.ofDays(7).toMillis());
    }

    @Test
    void aBatchWithAKeyTakenOverIsRenewedKeyByKeyAndOnlyTheTakenKeyIsLost() {
        List<IdempotencyKey> keys = batch("a", Duration.ofMillis(300), 8);
        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(25))
                .until(() -> claimOne("order-1", "b"), c -> c instanceof Claim.Claimed);

        assertThat(store.renew(keys, "a", LEASE)).containsExactly(key("order-1"));

        assertThat(claimOne("order-2", "c")).isInstanceOf(Claim.Busy.class);
        assertThat(store.inspect(key("order-1")).orElseThrow().owner()).contains("b");
    }

    @Test
    void aKeyResetWhileHeldIsLostToItsOwnerAtTheNextRenewalAndRefusedAtItsCompletion() {
        List<IdempotencyKey> keys = batch("a", LEASE, 8);

        store.reset(key("order-3"));

        assertThat(store.renew(keys, "a", LEASE)).containsExactly(key("order-3"));
        assertThat(claimOne("order-4", "b")).isInstanceOf(Claim.Busy.class);
        assertThat(store.complete(keys, "a")).containsExactly(key("order-3"));
        assertThat(claimOne("order-4", "b")).isInstanceOf(Claim.Done.class);
    }

    @Test
    void aRenewalKeepsTheMarksOfItsBatch() {
        List<IdempotencyKey> keys = batch("a", Duration.ofMillis(800), 8);
        store.complete(keys.subList(0, 4), "a");
        String record = record(value(keys.get(0)));

        assertThat(store.renew(List.of(key("order-6")), "a", LEASE)).isEmpty();

        assertThat(text(record)).startsWith("L|a|").endsWith("|f");
        await().pollDelay(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(2)).until(() -> true);
        assertThat(claimOne("order-6", "b")).isInstanceOf(Claim.Busy.class);
        assertThat(claimOne("order-2", "b")).isInstanceOf(Claim.Done.class);
    }

    @Test
    void aBatchRecordMarkedLaterThanItsKeysCanHoldIsRefusedAndLeftAsItWas() throws Exception {
        List<IdempotencyKey> keys = batch("a", LEASE, 8);
        String record = record(value(keys.get(0)));
        String before = text(record);
        RedisScripts scripts = new RedisScripts(redisson, "claims.lua");

        // Marking places 0 and 1 no later than 0 ms after the claim, once a millisecond has passed
        // since (in the claim's own millisecond a window of 0 ms is still open): too late, so refused.
        millisecondsPass(2);
        List<Object> reply = scripts.many(List.of(record), (slot, group) -> new RedisScripts.Extra(List.of(),
                List.of("complete", "a", "604800000", "86400000", "p", "0", "", "608400000", "0001", prefix + "pending",
                        "86400000", prefix + "batch:")));

        assertThat(((Number) reply.get(0)).longValue()).isZero();
        assertThat(text(record)).isEqualTo(before);
        assertThat(claimOne("order-1", "b")).isInstanceOf(Claim.Busy.class);
    }

    @Test
    void keysMarkedInABatchRecordThatWasLostAreWrittenDoneWhenTheBatchCompletes() {
        List<IdempotencyKey> keys = batch("a", LEASE, 8);
        store.complete(keys.subList(0, 4), "a");
        redisson.getKeys().delete(record(value(keys.get(0))));

        // The whole completion is refused (no record): every key of the batch goes one by one.
        assertThat(store.complete(keys.subList(4, 8), "a")).isEmpty();

        for (IdempotencyKey key : keys) {
            assertThat(value(key)).isEqualTo("D");
        }
    }

    @Test
    void aCallTooLargeForABatchRecordWritesFullRecords() {
        List<IdempotencyKey> keys = batch("a", LEASE, CompactClaims.MAX_PLACES + 1);

        assertThat(value(keys.get(0))).startsWith("C|a|");
        assertThat(store.complete(keys, "a")).isEmpty();
        assertThat(value(keys.get(CompactClaims.MAX_PLACES))).isEqualTo("D");
    }

    /** Compact records written before places (c + an 11-character id) are still read. */
    @Test
    void aCompactRecordOfTheFirstFormatIsStillRead() {
        String done = "AAAAAAAAAAA";
        String held = "BBBBBBBBBBB";
        redisson.getBucket(prefix + "batch:" + done, StringCodec.INSTANCE)
                .set("D|" + (System.currentTimeMillis() + 60_000));
        redisson.getBucket(prefix + "batch:" + held, StringCodec.INSTANCE)
                .set("L|a|" + (System.currentTimeMillis() + 60_000) + "|1");
        redisson.getBucket(store.redisKey(key("order-1")), StringCodec.INSTANCE).set("c" + done);
        redisson.getBucket(store.redisKey(key("order-2")), StringCodec.INSTANCE).set("c" + held);

        assertThat(claimOne("order-1", "b")).isInstanceOf(Claim.Done.class);
        assertThat(claimOne("order-2", "b")).isInstanceOf(Claim.Busy.class);
        assertThat(store.complete(List.of(key("order-2")), "a")).isEmpty();
        assertThat(claimOne("order-2", "b")).isInstanceOf(Claim.Done.class);
    }

    @Test
    void aKeyThatFailedOrWasReleasedIsNotCoveredByItsBatchesCompletion() {
        List<IdempotencyKey> keys = batch("a", LEASE, 8);
        IdempotencyKey failed = keys.get(6);
        IdempotencyKey released = keys.get(7);
        assertThat(store.fail(failed, "a", "IllegalStateException: out of stock")).isPresent();
        store.release(List.of(released), "a");

        // The rest of the batch completes in one write ...
        assertThat(store.complete(without(keys, failed, released), "a")).isEmpty();

        // ... which stands for the rest only: the failed and the released keys are claimable, counted.
        assertThat(value(keys.get(0))).startsWith("b");
        assertThat(claimOne("order-1", "b")).isInstanceOf(Claim.Done.class);
        Claim again = claimOne(failed.value(), "b");
        assertThat(again).isInstanceOf(Claim.Claimed.class);
        assertThat(((Claim.Claimed) again).failures()).isEqualTo(1);
        assertThat(claimOne(released.value(), "b")).isInstanceOf(Claim.Claimed.class);
    }

    @Test
    void aKeyTakenOverFromABatchIsRefusedToItsOldOwnerAndTheRestAreDone() {
        List<IdempotencyKey> keys = batch("a", Duration.ofMillis(300), 8);
        Claim takeover = await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(25))
                .until(() -> claimOne("order-1", "b"), c -> c instanceof Claim.Claimed);
        assertThat(((Claim.Claimed) takeover).abandoned()).isTrue();

        // The paused old owner resumes and completes its whole batch.
        assertThat(store.complete(keys, "a")).containsExactly(key("order-1"));

        assertThat(store.inspect(key("order-1")).orElseThrow().owner()).contains("b");
        assertThat(claimOne("order-1", "c")).isInstanceOf(Claim.Busy.class);
        assertThat(claimOne("order-2", "c")).isInstanceOf(Claim.Done.class);
    }

    @Test
    void aStoreThatDoesNotKnowTheBatchCompletesKeyByKeyForItsOwnerOnly() {
        List<IdempotencyKey> keys = batch("a", LEASE, 8);
        RedisClaimStore restarted = newStore();

        assertThat(restarted.complete(List.of(keys.get(0)), "z")).containsExactly(keys.get(0));
        assertThat(value(keys.get(0))).startsWith("b");
        assertThat(restarted.complete(keys, "a")).isEmpty();

        assertThat(value(keys.get(0))).isEqualTo("D");
        assertThat(claimOne("order-2", "b")).isInstanceOf(Claim.Done.class);
    }

    @Test
    void renewingACompactClaimRenewsItsBatchAndInspectShowsTheClaim() {
        batch("a", Duration.ofMillis(800), 8);
        Optional<ClaimRecord> before = store.inspect(key("order-2"));

        assertThat(store.renew(List.of(key("order-1")), "a", LEASE)).isEmpty();

        // One renewal holds the batch: order-2 cannot be taken over after its first lease either.
        await().pollDelay(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(2)).until(() -> true);
        assertThat(claimOne("order-2", "b")).isInstanceOf(Claim.Busy.class);
        assertThat(before.orElseThrow().state()).isEqualTo(ClaimRecord.State.CLAIMED);
        assertThat(before.orElseThrow().owner()).contains("a");
        assertThat(before.orElseThrow().attempts()).isZero();
        assertThat(value(key("order-2"))).startsWith("b");
    }

    /**
     * On a single server no slot migrates, so a compact key without its batch record lost it (evicted
     * under a maxmemory-policy other than noeviction, or deleted): the key reads as lost too, as a full
     * record evicted would, instead of being deferred for the whole done window (decision 0039). On
     * a cluster it stays unreadable until its batch record arrives (ClusterReshardIT).
     */
    @Test
    void aCompactKeyWhoseBatchRecordWasLostReadsAsLostOnASingleServer() {
        List<IdempotencyKey> keys = batch("a", LEASE, 8);
        store.complete(keys, "a");
        String compact = value(keys.get(0));
        assertThat(claimOne("order-1", "b")).isInstanceOf(Claim.Done.class);
        redisson.getKeys().delete(record(compact));

        Claim claim = claimOne("order-1", "b");

        assertThat(claim).isInstanceOf(Claim.Claimed.class);
        assertThat(((Claim.Claimed) claim).fresh()).as("no record: fresh, as after a Redis loss").isTrue();
        assertThat(store.complete(List.of(keys.get(1)), "b")).as("not b's: refused").containsExactly(keys.get(1));
        assertThat(value(keys.get(1))).isEqualTo(compact.substring(0, 10) + CompactClaims.placeText(1));
    }

    @Test
    void aKeyWhoseReleaseWasRefusedForAnUnreadableBatchRecordIsNotCoveredByItsBatch() {
        List<IdempotencyKey> keys = batch("a", LEASE, 8);
        String record = record(value(keys.get(0)));
        // Given a release refused because the batch record could not be read (as on a cluster node
        // whose batch record is still on its way): nothing was rewritten
        redisson.getKeys().rename(record, record + ":away");
        store.release(List.of(keys.get(7)), "a");
        redisson.getKeys().rename(record + ":away", record);

        // When the owner completes the other seven
        assertThat(store.complete(keys.subList(0, 7), "a")).isEmpty();

        // Then they are done, and the released key is still its owner's claim: never done
        assertThat(claimOne("order-1", "b")).isInstanceOf(Claim.Done.class);
        assertThat(claimOne("order-8", "b")).isInstanceOf(Claim.Busy.class);
        assertThat(text(record)).as("marked by their places, not whole").startsWith("L|a|");
    }

    @Test
    void aBatchIdInUseIsRefusedAndTheCallWritesFullRecords() {
        String id = "Ab3Ab3Ab3";
        redisson.getBucket(prefix + "batch:" + id, StringCodec.INSTANCE).set("L|someone|0|0");
        RedisScripts scripts = new RedisScripts(redisson, "claims.lua");
        String redisKey = store.redisKey(key("order-1"));

        List<Object> reply = scripts.many(List.of(redisKey), (slot, group) -> new RedisScripts.Extra(
                List.of(prefix + "epoch", prefix + "batch:" + id),
                List.of("claim", "a", "30000", "86400000", "604800000", id, "0:0,", "86400000", prefix + "batch:")));

        assertThat((String) reply.get(0)).startsWith("C:");
        assertThat(value(key("order-1"))).startsWith("C|a|");
        assertThat(redisson.<String>getBucket(prefix + "batch:" + id, StringCodec.INSTANCE).get())
                .isEqualTo("L|someone|0|0");
    }

    @Test
    void aBatchRecordCompletedLaterThanItsKeysCanHoldIsRefusedSoItsKeysGoOneByOne() throws Exception {
        List<IdempotencyKey> keys = batch("a", LEASE, 8);
        String record = record(value(keys.get(0)));
        RedisScripts scripts = new RedisScripts(redisson, "claims.lua");

        // Completing no later than 0 ms after the claim, once a millisecond has passed since: too
        // late, so refused and left as it was.
        millisecondsPass(2);
        List<Object> reply = scripts.many(List.of(record), (slot, group) -> new RedisScripts.Extra(List.of(),
                List.of("complete", "a", "604800000", "86400000", "b", "0", "", "608400000", "", prefix + "pending",
                        "86400000", prefix + "batch:")));

        assertThat(((Number) reply.get(0)).longValue()).isZero();
        assertThat(redisson.<String>getBucket(record, StringCodec.INSTANCE).get()).startsWith("L|a|");
        assertThat(claimOne("order-1", "b")).isInstanceOf(Claim.Busy.class);
    }

    @Test
    void aBornTimeBefore1970IsReadAsUnknownAndEveryKeyKeepsItsOwnFloor() {
        List<ClaimRequest> requests = IntStream.rangeClosed(1, 9)
                .mapToObj(i -> new ClaimRequest(key("order-" + i), i == 1 ? 3 : 0,
                        i == 1 ? java.time.Instant.ofEpochMilli(-1) : java.time.Instant.now()))
                .toList();

        List<Claim> claims = store.claim(requests, "a", LEASE);

        assertThat(claims).allMatch(c -> c instanceof Claim.Claimed);
        // order-1: no record and its born time unknown, so the broker's count stands (3 deliveries).
        assertThat(((Claim.Claimed) claims.get(0)).attempt()).isEqualTo(3);
        assertThat(((Claim.Claimed) claims.get(1)).attempt()).isEqualTo(1);
        assertThat(value(key("order-2"))).startsWith("b");
    }
}
