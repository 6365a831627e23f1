package dev.idem.spring.internal;

import dev.idem.spring.IdemProperties;
import java.util.Arrays;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * Chooses the ledger's {@code DataSource} and transaction manager from the context: the beans named
 * by {@code idem.ledger.data-source} and {@code idem.ledger.transaction-manager}, else the only (or
 * the {@code @Primary}) one. When the ledger is wanted and the choice is not clear, start-up fails
 * naming the setting that makes it, never falling back to Redis-only mode or to a transaction
 * manager of Idem's own that the listener's {@code @Transactional} code would not join.
 */
final class LedgerBeans {

    private final ListableBeanFactory beans;
    private final IdemProperties.Ledger settings;

    LedgerBeans(ListableBeanFactory beans, IdemProperties.Ledger settings) {
        this.beans = beans;
        this.settings = settings;
    }

    /** The ledger's {@code DataSource}; null when the context has none (Redis-only mode). */
    @Nullable DataSource dataSource() {
        String named = settings.getDataSource();
        if (named != null && !named.isBlank()) {
            return named(named, DataSource.class, "idem.ledger.data-source");
        }
        String[] names = beans.getBeanNamesForType(DataSource.class);
        if (names.length == 0) {
            return null;
        }
        DataSource chosen = beans.getBeanProvider(DataSource.class).getIfUnique();
        if (chosen == null) {
            throw new IllegalStateException("idem.ledger: " + names.length + " DataSource beans " + Arrays.toString(names)
                    + " and none is @Primary: set idem.ledger.data-source to the one the ledger and the listeners' "
                    + "writes use, or idem.ledger.enabled=false for Redis-only mode");
        }
        return chosen;
    }

    /** The transaction manager of the ledger's {@code DataSource}: the application's, or one of its own when it has none. */
    PlatformTransactionManager transactions(DataSource dataSource) {
        String named = settings.getTransactionManager();
        if (named != null && !named.isBlank()) {
            return named(named, PlatformTransactionManager.class, "idem.ledger.transaction-manager");
        }
        String[] names = beans.getBeanNamesForType(PlatformTransactionManager.class);
        if (names.length == 0) {
            return new DataSourceTransactionManager(dataSource);
        }
        PlatformTransactionManager chosen = beans.getBeanProvider(PlatformTransactionManager.class).getIfUnique();
        if (chosen == null) {
            throw new IllegalStateException("idem.ledger: " + names.length + " transaction managers "
                    + Arrays.toString(names) + " and none is @Primary: set idem.ledger.transaction-manager to the one "
                    + "of the ledger's DataSource (the one the listeners' @Transactional code joins)");
        }
        return chosen;
    }

    private <B> B named(String name, Class<B> type, String setting) {
        try {
            return beans.getBean(name, type);
        } catch (NoSuchBeanDefinitionException e) {
            throw new IllegalStateException(setting + " names '" + name + "', but there is no " + type.getSimpleName()
                    + " bean of that name; there are " + Arrays.toString(beans.getBeanNamesForType(type)), e);
        }
    }
}
