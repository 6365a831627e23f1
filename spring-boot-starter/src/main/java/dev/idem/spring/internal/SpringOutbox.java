package dev.idem.spring.internal;

import dev.idem.core.outbox.Outbox;
import dev.idem.listener.OutboxRuntime;
import dev.idem.spring.IdemProperties;
import javax.sql.DataSource;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.util.ClassUtils;

/**
 * The outbox in a Spring application ({@code idem.outbox.enabled=true}): the table on the ledger's
 * {@code DataSource} (the one the listeners' and the application's {@code @Transactional} code
 * writes through), its relay from {@code idem.outbox.*}, and an {@link Outbox} that writes on the
 * transaction Spring has bound to that {@code DataSource}.
 */
public final class SpringOutbox {

    private SpringOutbox() {
    }

    /**
     * The outbox and its relay, started.
     *
     * @throws IllegalStateException naming the setting when the context has no {@code DataSource} or
     *                               an {@code idem.outbox} setting is wrong
     */
    public static OutboxRuntime runtime(ListableBeanFactory beans, IdemProperties properties,
                                        ListenerProcessors processors) {
        DataSource dataSource = dataSource(beans, properties);
        try {
            return OutboxRuntime.start(dataSource, properties.getOutbox().settings(), processors::kafkaSettings,
                    processors::nameServer, relay -> {
                        if (ClassUtils.isPresent("io.micrometer.core.instrument.MeterRegistry",
                                SpringOutbox.class.getClassLoader())) {
                            io.micrometer.core.instrument.MeterRegistry registry = beans.getBeanProvider(
                                    io.micrometer.core.instrument.MeterRegistry.class).getIfUnique();
                            if (registry != null) {
                                relay.meterRegistry(registry);
                            }
                        }
                    });
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    /** Sends on the transaction Spring has bound to the outbox's {@code DataSource}, and on no other. */
    public static Outbox outbox(OutboxRuntime runtime, ListableBeanFactory beans, IdemProperties properties) {
        DataSource dataSource = dataSource(beans, properties);
        BoundConnections connections = BoundConnections.of(dataSource,
                new LedgerBeans(beans, properties.getLedger()).transactions(dataSource));
        return runtime.outbox().on(() -> connections.current("Outbox.send"));
    }

    private static DataSource dataSource(ListableBeanFactory beans, IdemProperties properties) {
        DataSource dataSource = new LedgerBeans(beans, properties.getLedger()).dataSource();
        if (dataSource == null) {
            throw new IllegalStateException("idem.outbox.enabled is true but the context has no DataSource: the outbox "
                    + "is a table beside the effects (spring.datasource.*)");
        }
        return dataSource;
    }
}
