package dev.idem.sample.inventory.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.PostgresDatabase;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The demo's scenario on PostgreSQL, in-process Kafka and RocketMQ and Redis: two instances of the
 * service as child JVMs, every order three times at once, poison orders, transient failures, one
 * instance killed with SIGKILL and started again. With Idem every invariant of the report holds and
 * a replayed dead letter runs once; with the guards off (a naive consumer) the same checks fail,
 * so they can. Skipped without PostgreSQL (the test kit's rule), failed instead in CI.
 */
@IdemTestKit
class InventoryDemoIT {

    // Fewer orders than the demo's 150: the same mix of duplicates, poison and failures, in less time.
    private static final int ORDERS = 90;
    private static final long SEED = 15;
    private static Infrastructure infrastructure;

    @BeforeAll
    static void start(PostgresDatabase db) throws Exception {
        infrastructure = Infrastructure.start(dir(), true, System.out);
        assertThat(infrastructure.database.kind()).as("the test kit found PostgreSQL at " + db.jdbcUrl())
                .isEqualTo("PostgreSQL");
    }

    @AfterAll
    static void stop() {
        if (infrastructure != null) {
            infrastructure.close();
        }
    }

    @Test
    void withIdemEveryOrderIsDeductedOnceThroughDuplicatesFailuresAndACrash() throws Exception {
        Demo.Settings settings = new Demo.Settings(dir(), true, ORDERS, SEED, true, true, false);

        Demo.Result result = Demo.run(settings, infrastructure, Names.of(suffix("g")), System.out);

        assertThat(failed(result.report())).as("checks that failed").isEmpty();
        assertThat(result.report().pass()).isTrue();
        assertThat(result.replayed()).as("the replayed dead letter ran exactly once more, without a second refund").isTrue();
    }

    @Test
    void withTheGuardsOffTheSameScenarioFails() throws Exception {
        Demo.Settings settings = new Demo.Settings(dir(), false, ORDERS, SEED, false, false, false);

        Demo.Result result = Demo.run(settings, infrastructure, Names.of(suffix("n")), System.out);

        assertThat(result.report().pass()).isFalse();
        assertThat(failed(result.report())).as("checks that failed")
                .containsKeys("every valid order deducted exactly once", "stock of every SKU as expected",
                        "every poison order dead-lettered once");
        assertThat(failed(result.report()).get("every valid order deducted exactly once"))
                .as("copies deducted again").doesNotStartWith("0 deducted more than once");
    }

    private static Map<String, String> failed(Report report) {
        return report.checks().stream().filter(check -> !check.holds())
                .collect(Collectors.toMap(Report.Check::invariant, Report.Check::detail));
    }

    private static String suffix(String run) {
        return "it" + run + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
    }

    private static Path dir() {
        return Path.of("target", "demo-it").toAbsolutePath();
    }
}
