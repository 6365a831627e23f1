package dev.idem.spring.internal;

import dev.idem.core.IdempotentProcessor;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.listener.ListenerSpec;
import dev.idem.redis.RedisClaimStore;
import dev.idem.spring.IdemProperties;
import java.util.HashMap;
import java.util.Map;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.util.ClassUtils;

/**
 * What Spring gives each listener's processor and consumer: the ledger on the application's
 * {@code DataSource} in its transaction manager (made once, shared), the claim store, the meters and
 * the tracer from the context; and the broker settings every listener shares. Thread-safe.
 */
public final class ListenerProcessors {

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
    public boolean onLedger(ListenerSpec spec) {
        return spec.ledger() && ledger() != null;
    }

    /** The listener's processor builder (see {@link dev.idem.listener.ListenerProcessors}), with the meters and tracer. */
    public IdempotentProcessor.Builder<Object> processor(ListenerSpec spec) {
        IdempotentProcessor.Builder<Object> processor;
        try {
            processor = dev.idem.listener.ListenerProcessors.processor(spec, claims, spec.ledger() ? ledger() : null);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
        if (ClassUtils.isPresent("io.micrometer.core.instrument.MeterRegistry", getClass().getClassLoader())) {
            Meters.register(beans, processor, spec.name());
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
                SpringTransactions spring = new SpringTransactions(dataSource, transactions);
                spring.verify();
                ledger = JdbcEffectLedger.builder(dataSource).table(settings.getTable())
                        .createTable(settings.isCreateTable()).transactions(spring).build();
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
