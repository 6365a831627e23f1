package dev.idem.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.idem.spring.app.OrdersApp;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import java.util.HashMap;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.transaction.PlatformTransactionManager;

/** A wrong setting fails start-up with a message that names it, before any consumer starts. */
@IdemTestKit
class SpringStartupFailuresIT {

    private static Map<String, Object> valid(RedisEndpoint redis, PostgresDatabase db) {
        Map<String, Object> p = new HashMap<>();
        p.put("idem.redis.url", redis.uri().toString());
        p.put("idem.kafka.bootstrap.servers", "127.0.0.1:1");
        p.put("idem.ledger.table", "spring_never_created");
        p.put("spring.datasource.url", db.jdbcUrl());
        p.put("spring.datasource.username", db.user());
        p.put("spring.datasource.password", db.password());
        p.put("test.topic", "never-consumed");
        p.put("test.group", "never-joined");
        p.put("test.table", "never_written");
        return p;
    }

    private static String failure(Map<String, Object> properties, Class<?>... more) {
        Class<?>[] sources = new Class<?>[more.length + 1];
        sources[0] = OrdersApp.class;
        System.arraycopy(more, 0, sources, 1, more.length);
        Throwable thrown = catchThrowable(() -> {
            try (ConfigurableApplicationContext context = new SpringApplicationBuilder(sources)
                    .web(WebApplicationType.NONE).properties(properties).run()) {
                context.getBean(IdemListenerContainer.class);
            }
        });
        assertThat(thrown).as("start-up should fail").isNotNull();
        StringBuilder messages = new StringBuilder();
        for (Throwable t = thrown; t != null; t = t.getCause()) {
            messages.append(t.getMessage()).append('\n');
        }
        return messages.toString();
    }

    @Test
    void anOutboxBrokerThatIsNoneIsNamed(RedisEndpoint redis, PostgresDatabase db) {
        Map<String, Object> p = valid(redis, db);
        p.put("idem.outbox.enabled", "true");
        p.put("idem.outbox.create-table", "true");
        p.put("idem.outbox.table", "spring_failing_outbox");
        p.put("idem.outbox.broker", "pulsar");
        assertThat(failure(p)).contains("idem.outbox.broker must be kafka or rocketmq but was 'pulsar'");
    }

    @Test
    void anOutboxBrokerLeftToChooseWithBothAdaptersIsNamed(RedisEndpoint redis, PostgresDatabase db) {
        Map<String, Object> p = valid(redis, db);
        p.put("idem.outbox.enabled", "true");
        p.put("idem.outbox.create-table", "true");
        p.put("idem.outbox.table", "spring_failing_outbox");
        assertThat(failure(p)).contains("idem.outbox.broker is not set and the class path has both");
    }

    @Test
    void aMissingOutboxTableIsNamed(RedisEndpoint redis, PostgresDatabase db) {
        Map<String, Object> p = valid(redis, db);
        p.put("idem.outbox.enabled", "true");
        p.put("idem.outbox.table", "spring_no_such_outbox");
        assertThat(failure(p)).contains("idem.outbox.table").contains("spring_no_such_outbox");
    }

    @Test
    void aMisspelledListenerSettingIsNamed(RedisEndpoint redis, PostgresDatabase db) {
        Map<String, Object> p = valid(redis, db);
        p.put("idem.listeners.orders.max-attempt", "3");
        assertThat(failure(p)).contains("idem.listeners.orders.max-attempt");
    }

    @Test
    void settingsForNoListenerAreNamed(RedisEndpoint redis, PostgresDatabase db) {
        Map<String, Object> p = valid(redis, db);
        p.put("idem.listeners.ordres.max-attempts", "3");
        assertThat(failure(p)).contains("idem.listeners.ordres names no listener; listeners are [orders]");
    }

    @Test
    void aMissingRedisUrlIsNamed(RedisEndpoint redis, PostgresDatabase db) {
        Map<String, Object> p = valid(redis, db);
        p.remove("idem.redis.url");
        assertThat(failure(p)).contains("idem.redis.url is required");
    }

    @Test
    void aDoneWindowShorterThanTheAttemptsWindowIsNamed(RedisEndpoint redis, PostgresDatabase db) {
        Map<String, Object> p = valid(redis, db);
        p.put("idem.redis.done-window", "1h");
        assertThat(failure(p)).contains("idem.redis.done-window (PT1H) must be >= idem.redis.attempts-window (PT24H)");
    }

    @Test
    void aLedgerTableThatDoesNotExistIsNamed(RedisEndpoint redis, PostgresDatabase db) {
        assertThat(failure(valid(redis, db))).contains("idem.ledger", "spring_never_created");
    }

    @Test
    void twoDataSourcesWithNoPrimaryFailStartUpNamingTheSettingInsteadOfRunningRedisOnly(RedisEndpoint redis,
                                                                                        PostgresDatabase db) {
        assertThat(failure(valid(redis, db), TwoDataSources.class))
                .contains("2 DataSource beans", "ordersDataSource", "reportsDataSource", "idem.ledger.data-source");
    }

    @Test
    void theDataSourceNamedBySettingIsTheLedgers(RedisEndpoint redis, PostgresDatabase db) {
        Map<String, Object> p = valid(redis, db);
        p.put("idem.ledger.data-source", "ordersDataSource");
        // The ledger is built on it: its missing table is what fails now.
        assertThat(failure(p, TwoDataSources.class)).contains("spring_never_created")
                .doesNotContain("DataSource beans");
    }

    @Test
    void aDataSourceNameThatNamesNoBeanIsNamed(RedisEndpoint redis, PostgresDatabase db) {
        Map<String, Object> p = valid(redis, db);
        p.put("idem.ledger.data-source", "orderDataSource");
        assertThat(failure(p, TwoDataSources.class))
                .contains("idem.ledger.data-source names 'orderDataSource', but there is no DataSource bean of that name");
    }

    @Test
    void twoTransactionManagersWithNoPrimaryFailStartUpNamingTheSetting(RedisEndpoint redis, PostgresDatabase db) {
        assertThat(failure(valid(redis, db), TwoTransactionManagers.class))
                .contains("2 transaction managers", "idem.ledger.transaction-manager");
    }

    @Test
    void aTransactionManagerOfAnotherDataSourceFailsStartUpInsteadOfLettingTheLedgerRowCommitAlone(
            RedisEndpoint redis, PostgresDatabase db) {
        Map<String, Object> p = valid(redis, db);
        p.put("idem.ledger.data-source", "ordersDataSource");
        p.put("idem.ledger.create-table", "true");
        p.put("idem.ledger.table", "spring_other_tx_ledger");
        assertThat(failure(p, TwoDataSources.class, ReportsTransactions.class))
                .contains("idem.ledger.transaction-manager", "not on the ledger's DataSource");
    }

    /** The only transaction manager, of the reporting database. */
    @Configuration(proxyBeanMethods = false)
    static class ReportsTransactions {
        @Bean
        PlatformTransactionManager reportsTransactions(@Qualifier("reportsDataSource") DataSource reports) {
            return new DataSourceTransactionManager(reports);
        }
    }

    /** Two databases, neither primary, as an application with a reporting database has them. */
    @Configuration(proxyBeanMethods = false)
    static class TwoDataSources {
        @Bean
        DataSource ordersDataSource(@Value("${spring.datasource.url}") String url,
                                    @Value("${spring.datasource.username}") String user,
                                    @Value("${spring.datasource.password}") String password) {
            return new DriverManagerDataSource(url, user, password);
        }

        @Bean
        DataSource reportsDataSource(@Value("${spring.datasource.url}") String url,
                                     @Value("${spring.datasource.username}") String user,
                                     @Value("${spring.datasource.password}") String password) {
            return new DriverManagerDataSource(url, user, password);
        }

        @Bean
        JdbcTemplate jdbcTemplate(@Qualifier("ordersDataSource") DataSource orders) {
            return new JdbcTemplate(orders);
        }
    }

    /** Two transaction managers, neither primary (JDBC and another, say). */
    @Configuration(proxyBeanMethods = false)
    static class TwoTransactionManagers {
        @Bean
        PlatformTransactionManager ordersTransactions(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        PlatformTransactionManager otherTransactions(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }
    }
}
