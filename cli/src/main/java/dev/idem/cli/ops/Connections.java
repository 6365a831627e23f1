package dev.idem.cli.ops;

import dev.idem.cli.CliException;
import dev.idem.cli.config.CommandConfig;
import dev.idem.cli.config.Setting;
import dev.idem.cli.letters.DeadLetterTopic;
import dev.idem.cli.letters.KafkaDeadLetterTopic;
import dev.idem.cli.letters.RocketMqDeadLetterTopic;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.core.outbox.JdbcOutbox;
import dev.idem.core.spi.ClaimStoreException;
import dev.idem.redis.RedisClaimStore;
import dev.idem.redis.RedisUrl;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.BaseMasterSlaveServersConfig;
import org.redisson.config.Config;
import org.redisson.config.SingleServerConfig;

/**
 * What a command connects to, opened on first use and closed together: Redis (the claim store and
 * the replay records), the effect ledger (when a JDBC URL is set), a broker's dead-letter topics.
 * Not thread-safe.
 */
public final class Connections implements AutoCloseable {

    // An unreachable Redis is reported after this, not after Redisson's default retries.
    private static final int REDIS_TIMEOUT_MS = 5_000;

    private final CommandConfig settings;
    private final List<AutoCloseable> opened = new ArrayList<>();
    // Each opened on first use.
    private @Nullable RedissonClient redisson;
    private @Nullable RedisClaimStore claims;
    private @Nullable ReplayRecords records;
    private @Nullable Optional<JdbcEffectLedger> ledger;

    /** Connections for {@code settings}; nothing is opened yet. */
    public Connections(CommandConfig settings) {
        this.settings = settings;
    }

    /** The settings in force. */
    public CommandConfig settings() {
        return settings;
    }

    /** The claim store (its operator's side). */
    public RedisClaimStore claims() {
        if (claims == null) {
            try {
                claims = RedisClaimStore.builder(redisson()).keyPrefix(settings.require(Setting.KEY_PREFIX)).build();
            } catch (ClaimStoreException e) {
                throw new CliException("cannot use Redis at " + redisAddress() + ": " + e.getMessage(), e);
            }
        }
        return claims;
    }

    /** Whether Redis is configured at all. */
    public boolean hasRedis() {
        return settings.get(Setting.REDIS_URL).isPresent();
    }

    /** The record of replays and purges, in Redis. */
    public ReplayRecords records() {
        if (records == null) {
            records = new ReplayRecords(redisson(), settings.require(Setting.KEY_PREFIX));
        }
        return records;
    }

    /** The effect ledger, when a JDBC URL is set (guarded mode). */
    public Optional<JdbcEffectLedger> ledger() {
        if (ledger == null) {
            ledger = settings.get(Setting.JDBC_URL).map(url -> {
                try {
                    return JdbcEffectLedger.builder(new DriverDataSource(url, settings.get(Setting.JDBC_USER).orElse(null),
                            settings.get(Setting.JDBC_PASSWORD).orElse(null)))
                            .table(settings.require(Setting.JDBC_TABLE)).build();
                } catch (RuntimeException e) {
                    throw new CliException("cannot use the effect ledger at " + url + ": " + rootMessage(e), e);
                }
            });
        }
        return ledger;
    }

    /** The outbox in the ledger's database ({@code --jdbc-url}, required). */
    public JdbcOutbox outbox() {
        String url = settings.require(Setting.JDBC_URL);
        try {
            return JdbcOutbox.builder(new DriverDataSource(url, settings.get(Setting.JDBC_USER).orElse(null),
                    settings.get(Setting.JDBC_PASSWORD).orElse(null))).table(settings.require(Setting.OUTBOX_TABLE)).build();
        } catch (RuntimeException e) {
            throw new CliException("cannot use the outbox at " + url + ": " + rootMessage(e), e);
        }
    }

    /** The dead-letter topics of a broker. */
    public DeadLetterTopic topic(Broker broker) {
        DeadLetterTopic topic = switch (broker) {
            case KAFKA -> new KafkaDeadLetterTopic(settings.require(Setting.KAFKA_BOOTSTRAP), settings.kafkaProperties());
            case ROCKETMQ -> new RocketMqDeadLetterTopic(settings.require(Setting.ROCKETMQ_NAMESRV));
        };
        opened.add(topic);
        return topic;
    }

    private RedissonClient redisson() {
        if (redisson == null) {
            RedisUrl url;
            try {
                url = RedisUrl.parse(settings.require(Setting.REDIS_URL));
            } catch (IllegalArgumentException e) {
                throw new CliException(e.getMessage() + " (" + Setting.REDIS_URL.howToSet() + ")", e);
            }
            Config config = url.config(server -> {
                server.setConnectTimeout(REDIS_TIMEOUT_MS).setTimeout(REDIS_TIMEOUT_MS).setRetryAttempts(1);
                if (server instanceof SingleServerConfig single) {
                    single.setConnectionMinimumIdleSize(1).setConnectionPoolSize(8)
                            .setSubscriptionConnectionMinimumIdleSize(0);
                } else if (server instanceof BaseMasterSlaveServersConfig<?> nodes) {
                    nodes.setMasterConnectionMinimumIdleSize(1).setMasterConnectionPoolSize(8)
                            .setSlaveConnectionMinimumIdleSize(0).setSubscriptionConnectionMinimumIdleSize(0);
                }
            });
            // A command line needs few threads; Redisson's defaults are sized for servers.
            config.setThreads(2).setNettyThreads(4);
            try {
                redisson = Redisson.create(config);
            } catch (RuntimeException e) {
                throw new CliException("cannot reach Redis at " + redisAddress() + " (" + rootMessage(e) + ")", e);
            }
        }
        return redisson;
    }

    /** The Redis address without credentials, for messages. */
    private String redisAddress() {
        return RedisUrl.redacted(settings.get(Setting.REDIS_URL).orElse(""));
    }

    static String rootMessage(Throwable failure) {
        Throwable root = failure;
        // The deepest cause, each visited once: a cause chain may loop.
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        while (seen.add(root) && root.getCause() != null && !seen.contains(root.getCause())) {
            root = root.getCause();
        }
        return root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
    }

    @Override
    public void close() {
        for (AutoCloseable closeable : opened) {
            try {
                closeable.close();
            } catch (Exception e) {
                // Closing at exit: the command's result is already printed.
            }
        }
        if (redisson != null) {
            redisson.shutdown();
        }
    }
}
