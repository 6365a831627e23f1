package dev.idem.cli.ops;

import dev.idem.cli.CliException;
import dev.idem.cli.config.Setting;
import dev.idem.cli.config.Settings;
import dev.idem.cli.letters.DeadLetterTopic;
import dev.idem.cli.letters.KafkaDeadLetterTopic;
import dev.idem.cli.letters.RocketMqDeadLetterTopic;
import dev.idem.core.internal.Failures;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.core.spi.ClaimStoreException;
import dev.idem.redis.RedisClaimStore;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
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

    private final Settings settings;
    private final List<AutoCloseable> opened = new ArrayList<>();
    private RedissonClient redisson;
    private RedisClaimStore claims;
    private ReplayRecords records;
    private Optional<JdbcEffectLedger> ledger;

    /** Connections for {@code settings}; nothing is opened yet. */
    public Connections(Settings settings) {
        this.settings = settings;
    }

    /** The settings in force. */
    public Settings settings() {
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
            String url = settings.require(Setting.REDIS_URL);
            Config config = new Config();
            SingleServerConfig server = config.useSingleServer();
            try {
                URI uri = new URI(url);
                if (uri.getHost() == null || !(url.startsWith("redis://") || url.startsWith("rediss://"))) {
                    throw new CliException("the Redis URL must look like redis://host:6379, not '" + redisAddress() + "'");
                }
                server.setAddress(uri.getScheme() + "://" + uri.getHost() + ":" + (uri.getPort() < 0 ? 6379 : uri.getPort()));
                String userInfo = uri.getUserInfo();
                if (userInfo != null) {
                    int colon = userInfo.indexOf(':');
                    String user = colon < 0 ? null : userInfo.substring(0, colon);
                    server.setUsername(user == null || user.isEmpty() ? null : user);
                    server.setPassword(colon < 0 ? userInfo : userInfo.substring(colon + 1));
                }
                String path = uri.getPath();
                if (path != null && path.length() > 1) {
                    server.setDatabase(Integer.parseInt(path.substring(1)));
                }
            } catch (URISyntaxException | NumberFormatException e) {
                throw new CliException("the Redis URL must look like redis://host:6379, not '" + redisAddress() + "'", e);
            }
            server.setConnectTimeout(REDIS_TIMEOUT_MS).setTimeout(REDIS_TIMEOUT_MS).setRetryAttempts(1)
                    .setConnectionMinimumIdleSize(1).setConnectionPoolSize(8)
                    .setSubscriptionConnectionMinimumIdleSize(0);
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
        String url = settings.get(Setting.REDIS_URL).orElse("");
        return url.replaceAll("//[^@/]*@", "//");
    }

    static String rootMessage(Throwable failure) {
        Throwable root = Failures.root(failure);
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
