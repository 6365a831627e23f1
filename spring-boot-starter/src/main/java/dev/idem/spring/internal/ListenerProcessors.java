package dev.idem.spring.internal;

import dev.idem.core.Backoff;
import dev.idem.core.Compensation;
import dev.idem.core.DedupCheck;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.redis.RedisClaimStore;
import dev.idem.spring.IdemProperties;
import java.util.HashMap;
import java.util.Map;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.util.ClassUtils;

/**
 * Builds each listener's processor from its plan, the one way for annotated methods and wrapped
 * spring-kafka listeners: the claim store, the ledger on the application's {@code DataSource} in its
 * transaction manager (made once, shared), the policy settings, the compensation, the meters and the tracer; and
 * the broker settings every listener shares. Thread-safe.
 */
public final class ListenerProcessors {

    private static final Logger LOG = LoggerFactory.getLogger(ListenerProcessors.class);

    private final ListableBeanFactory beans;
    private final IdemProperties properties;
    private final RedisClaimStore claims;
    private boolean ledgerMade;
    private @Nullable JdbcEffectLedger ledger;

    public ListenerProcessors(ListableBeanFactory beans, IdemProperties properties, RedisClaimStore claims) {
        this.beans = beans;
        this.properties = properties;
        this.claims = claims;
    }

    /** Whether the listener runs on the ledger (guarded), rather than in Redis-only mode. */
    public boolean onLedger(ListenerPlan plan) {
        return plan.ledger() && ledger() != null;
    }

    /** The listener's processor builder, ready to hand to its consumer. */
    public IdempotentProcessor.Builder<Object> processor(ListenerPlan plan) {
        JdbcEffectLedger ledger = plan.ledger() ? ledger() : null;
        IdempotentProcessor.Builder<Object> processor;
        if (ledger != null) {
            processor = ledger.processor((delivery, tx) -> plan.invoker().invoke(delivery, tx));
        } else {
            if (plan.invoker().wantsConnection()) {
                throw new IllegalStateException("Idem listener " + plan.where() + " takes a Connection, which only "
                        + "the ledger's transaction gives: add a DataSource or drop the parameter");
            }
            processor = IdempotentProcessor.<Object>builder(delivery -> plan.invoker().invoke(delivery, null))
                    .dedupCheck(DedupCheck.none());
            // Said for every listener, declared or wrapped: Redis-only is a promise of its own.
            LOG.info("Idem listener '{}' runs in Redis-only mode (no ledger: {})", plan.name(), !plan.ledger()
                    ? "ledger = false" : !properties.getLedger().isEnabled() ? "idem.ledger.enabled=false"
                    : "no DataSource");
        }
        IdemProperties.Listener s = plan.settings();
        try {
            processor.claims(claims).codec(plan.codec()).keys(plan.keys()).maxAttempts(plan.maxAttempts())
                    .lease(plan.lease()).maxDeferral(s.getMaxDeferral())
                    .compensationAttempts(s.getCompensationAttempts())
                    .backoff(Backoff.exponential(s.getBackoffInitial(), s.getBackoffMax(), s.getBackoffJitter()));
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("idem.listeners." + plan.name() + ".*: " + e.getMessage(), e);
        }
        Compensation compensation = plan.compensation() != null ? plan.compensation()
                : plan.compensationHook() != null ? plan.compensationHook()::compensate : null;
        if (compensation != null) {
            processor.compensation(ledger != null ? ledger.compensation((letter, tx) -> compensation.compensate(letter))
                    : compensation);
        }
        if (ClassUtils.isPresent("io.micrometer.core.instrument.MeterRegistry", getClass().getClassLoader())) {
            Meters.register(beans, processor, plan.name());
        }
        if (properties.getTracing().isEnabled()
                && ClassUtils.isPresent("io.opentelemetry.api.OpenTelemetry", getClass().getClassLoader())) {
            Traces.register(beans, processor, properties.getTracing());
        }
        return processor;
    }

    /**
     * The Kafka client's settings every Kafka listener starts from: Spring Boot's {@code spring.kafka.*}
     * connection settings (servers, security, SSL, SASL, client properties) when spring-boot-kafka is
     * there, with {@code idem.kafka.*} over them; {@code auto.offset.reset} defaults to {@code earliest}.
     */
    public Map<String, Object> kafkaSettings() {
        Map<String, Object> settings = new HashMap<>();
        if (ClassUtils.isPresent(SpringKafkaSettings.PROPERTIES, getClass().getClassLoader())) {
            settings.putAll(SpringKafkaSettings.connection(beans));
        }
        settings.putAll(properties.getKafka());
        Object servers = settings.get("bootstrap.servers");
        if (servers == null || servers.toString().isBlank()) {
            throw new IllegalStateException("idem.kafka.bootstrap.servers (or spring.kafka.bootstrap-servers) is "
                    + "required but not set (idem.kafka.* are the Kafka client's settings)");
        }
        settings.putIfAbsent("auto.offset.reset", "earliest");
        return settings;
    }

    /** {@code idem.rocketmq.name-server}, required for RocketMQ listeners. */
    public String nameServer() {
        String nameServer = properties.getRocketmq().getNameServer();
        if (nameServer == null || nameServer.isBlank()) {
            throw new IllegalStateException("idem.rocketmq.name-server is required for RocketMQ listeners but not set");
        }
        return nameServer;
    }

    /** The ledger on the application's {@code DataSource}, in its transaction manager; null when disabled or absent. */
    private synchronized @Nullable JdbcEffectLedger ledger() {
        if (ledgerMade) {
            return ledger;
        }
        IdemProperties.Ledger settings = properties.getLedger();
        LedgerBeans chosen = new LedgerBeans(beans, settings);
        DataSource dataSource = settings.isEnabled() ? chosen.dataSource() : null;
        if (dataSource != null) {
            PlatformTransactionManager transactions = chosen.transactions(dataSource);
            try {
                ledger = JdbcEffectLedger.builder(dataSource).table(settings.getTable())
                        .createTable(settings.isCreateTable())
                        .transactions(new SpringTransactions(dataSource, transactions)).build();
            } catch (IllegalArgumentException e) {
                throw new IllegalStateException("idem.ledger: " + e.getMessage(), e);
            }
        }
        ledgerMade = true;
        return ledger;
    }

    /** OpenTelemetry, touched only when it is on the class path. */
    private static final class Traces {
        static void register(ListableBeanFactory beans, IdempotentProcessor.Builder<Object> processor,
                             IdemProperties.Tracing tracing) {
            io.opentelemetry.api.OpenTelemetry otel =
                    beans.getBeanProvider(io.opentelemetry.api.OpenTelemetry.class).getIfUnique();
            if (otel != null) {
                processor.openTelemetry(otel).traceKeys(tracing.getKeys());
            }
        }
    }

    /** Micrometer, touched only when it is on the class path. */
    private static final class Meters {
        static void register(ListableBeanFactory beans, IdempotentProcessor.Builder<Object> processor, String name) {
            io.micrometer.core.instrument.MeterRegistry registry =
                    beans.getBeanProvider(io.micrometer.core.instrument.MeterRegistry.class).getIfUnique();
            if (registry != null) {
                processor.meterRegistry(registry).meterTag("listener", name);
            }
        }
    }
}
