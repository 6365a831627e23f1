package dev.idem.spring;

import dev.idem.core.TraceKeys;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Idem's settings under {@code idem.*}. An unknown key fails start-up naming it; so does a listener
 * section ({@code idem.listeners.<name>}) that names no listener.
 */
@ConfigurationProperties(prefix = "idem", ignoreUnknownFields = false)
public class IdemProperties {

    private final Redis redis = new Redis();
    /** The Kafka client's settings ({@code bootstrap.servers} is required for Kafka listeners); {@code group.id} comes from the annotation. */
    private Map<String, String> kafka = new LinkedHashMap<>();
    private final RocketMq rocketmq = new RocketMq();
    private final Ledger ledger = new Ledger();
    private final Health health = new Health();
    private final Tracing tracing = new Tracing();
    private final IdemOutboxProperties outbox = new IdemOutboxProperties();
    /** Per listener, by its name ({@code <group>-<topic>} unless the annotation names it): what overrides the annotation. */
    private Map<String, IdemListenerProperties> listeners = new LinkedHashMap<>();

    public Redis getRedis() {
        return redis;
    }

    public Map<String, String> getKafka() {
        return kafka;
    }

    public void setKafka(Map<String, String> kafka) {
        this.kafka = kafka;
    }

    public RocketMq getRocketmq() {
        return rocketmq;
    }

    public Ledger getLedger() {
        return ledger;
    }

    public Health getHealth() {
        return health;
    }

    public Tracing getTracing() {
        return tracing;
    }

    /** The outbox ({@code idem.outbox.*}). */
    public IdemOutboxProperties getOutbox() {
        return outbox;
    }

    public Map<String, IdemListenerProperties> getListeners() {
        return listeners;
    }

    public void setListeners(Map<String, IdemListenerProperties> listeners) {
        this.listeners = listeners;
    }

    /** Redis for the claims. */
    public static class Redis {
        /**
         * The Redis deployment: {@code redis://host:6379}, {@code redis-sentinel://host:26379,host:26379#primary}
         * or {@code redis-cluster://host:6379,host:6379} ({@code rediss} for TLS). Required unless the
         * application has a {@code RedissonClient} bean.
         */
        private @Nullable String url;
        /** Prefix of Idem's Redis keys. */
        private String keyPrefix = "idem:";
        /**
         * How long Redis remembers a finished key of a Redis-only listener, its only dedup window.
         * Default 7 days (docs/guide/capacity.md).
         */
        private @Nullable Duration doneWindow;
        /**
         * How long Redis remembers a finished key of a listener on the ledger, which keeps effects single
         * beyond it (a later copy costs one ledger query). Default 1 hour.
         */
        private @Nullable Duration guardedDoneWindow;

        public @Nullable Duration getGuardedDoneWindow() {
            return guardedDoneWindow;
        }

        public void setGuardedDoneWindow(@Nullable Duration guardedDoneWindow) {
            this.guardedDoneWindow = guardedDoneWindow;
        }
        /** How long attempt and failure counts are kept; at most the done window. Default 1 day. */
        private @Nullable Duration attemptsWindow;

        public @Nullable Duration getAttemptsWindow() {
            return attemptsWindow;
        }

        public void setAttemptsWindow(@Nullable Duration attemptsWindow) {
            this.attemptsWindow = attemptsWindow;
        }

        public @Nullable Duration getDoneWindow() {
            return doneWindow;
        }

        public void setDoneWindow(@Nullable Duration doneWindow) {
            this.doneWindow = doneWindow;
        }

        public @Nullable String getUrl() {
            return url;
        }

        public void setUrl(@Nullable String url) {
            this.url = url;
        }

        public String getKeyPrefix() {
            return keyPrefix;
        }

        public void setKeyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
        }
    }

    /** RocketMQ. */
    public static class RocketMq {
        /** The name server, {@code host:9876}; required for RocketMQ listeners. */
        private @Nullable String nameServer;

        public @Nullable String getNameServer() {
            return nameServer;
        }

        public void setNameServer(@Nullable String nameServer) {
            this.nameServer = nameServer;
        }
    }

    /** The effect ledger on the application's {@code DataSource}. */
    public static class Ledger {
        /** False: no ledger even with a {@code DataSource} (Redis-only mode). */
        private boolean enabled = true;
        /** The ledger's table. */
        private String table = "idem_effect";
        /** Create the table at start-up (development, tests). */
        private boolean createTable;
        /** The bean name of the ledger's {@code DataSource}, when the context has several and none is {@code @Primary}. */
        private @Nullable String dataSource;
        /** The bean name of its transaction manager, when the context has several and none is {@code @Primary}. */
        private @Nullable String transactionManager;

        public @Nullable String getDataSource() {
            return dataSource;
        }

        public void setDataSource(@Nullable String dataSource) {
            this.dataSource = dataSource;
        }

        public @Nullable String getTransactionManager() {
            return transactionManager;
        }

        public void setTransactionManager(@Nullable String transactionManager) {
            this.transactionManager = transactionManager;
        }

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public String getTable() {
            return table;
        }

        public void setTable(String table) {
            this.table = table;
        }

        public boolean isCreateTable() {
            return createTable;
        }

        public void setCreateTable(boolean createTable) {
            this.createTable = createTable;
        }
    }

    /** Idem's health contributor. */
    public static class Health {
        /** A message coming back deferred for longer than this makes the health DOWN. */
        private Duration stuckAfter = Duration.ofMinutes(5);

        public Duration getStuckAfter() {
            return stuckAfter;
        }

        public void setStuckAfter(Duration stuckAfter) {
            this.stuckAfter = stuckAfter;
        }
    }

    /** Idem's spans, when the application has an OpenTelemetry bean (Spring Boot's OpenTelemetry starter makes one). */
    public static class Tracing {
        /** Whether Idem's listeners trace: one span per message run, under the producer's. */
        private boolean enabled = true;
        /** Whether spans carry the idempotency key: off, hashed or plain (keys can be personal data). */
        private TraceKeys keys = TraceKeys.OFF;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public TraceKeys getKeys() {
            return keys;
        }

        public void setKeys(TraceKeys keys) {
            this.keys = keys;
        }
    }
}
