package dev.idem.sample.inventory;

import io.micronaut.context.annotation.Context;
import io.micronaut.context.annotation.Requires;
import io.micronaut.context.annotation.Value;
import io.micronaut.transaction.TransactionOperations;
import java.sql.Connection;

/**
 * Creates the service's tables at start-up, before the listeners start (a {@link Context} bean is
 * made before the start-up event). Off with {@code inventory.schema.create=false}, when the tables
 * are created by migrations. Idem's ledger table is created by {@code idem.ledger.create-table}.
 */
@Context
@Requires(property = "inventory.schema.create", notEquals = "false")
final class Schema {

    Schema(TransactionOperations<Connection> transactions,
           @Value("${" + Guards.PROPERTY + ":on}") String guards) {
        boolean unique = !Guards.OFF.equals(guards);
        transactions.executeWrite(status -> {
            Stock.createTables(status.getConnection(), unique);
            return null;
        });
    }
}
