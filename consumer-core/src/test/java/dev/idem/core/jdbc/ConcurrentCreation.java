package dev.idem.core.jdbc;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/** Test helper: builds one ledger with {@code createTable(true)} from N threads released at one instant. */
final class ConcurrentCreation {

    private ConcurrentCreation() {
    }

    /** The failures of {@code threads} builds of {@code table} started together; empty when all built it. */
    static List<Throwable> build(DataSource dataSource, String table, int threads) throws Exception {
        CyclicBarrier start = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> builds = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                builds.add(pool.submit(() -> {
                    start.await(10, TimeUnit.SECONDS);
                    return JdbcEffectLedger.builder(dataSource).table(table).createTable(true).build();
                }));
            }
            List<Throwable> failures = new ArrayList<>();
            for (Future<?> build : builds) {
                try {
                    build.get(2, TimeUnit.MINUTES);
                } catch (java.util.concurrent.ExecutionException e) {
                    failures.add(e.getCause());
                }
            }
            return failures;
        } finally {
            pool.shutdownNow();
        }
    }
}
