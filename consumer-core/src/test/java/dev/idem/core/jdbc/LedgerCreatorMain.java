package dev.idem.core.jdbc;

import java.time.Instant;
import java.util.concurrent.locks.LockSupport;

/**
 * A child JVM of {@link ConcurrentLedgerCreationIT}: waits for the start instant shared by its
 * siblings, builds the ledger with {@code createTable(true)}, and exits 0, or prints the error and
 * exits 1. Arguments: JDBC URL, user, password (may be empty), table, start instant (epoch ms).
 */
public final class LedgerCreatorMain {

    private LedgerCreatorMain() {
    }

    public static void main(String[] args) {
        String url = args[0];
        String user = args[1];
        String password = args[2];
        String table = args[3];
        long startAt = Long.parseLong(args[4]);
        try {
            // Load the driver and the ledger's classes before the start instant, so every sibling
            // reaches the DDL at once: a build of a table that is not there (refused) does both.
            try {
                JdbcEffectLedger.builder(LedgerFixture.dataSource(url, user, password)).table(table + "_warm_up").build();
            } catch (IllegalArgumentException expected) {
                // The warm-up table does not exist.
            }
            LockSupport.parkUntil(startAt);
            JdbcEffectLedger.builder(LedgerFixture.dataSource(url, user, password)).table(table).createTable(true).build();
            System.out.println("built at " + Instant.now());
            System.exit(0);
        } catch (Throwable e) {
            e.printStackTrace(System.out);
            System.exit(1);
        }
    }
}
