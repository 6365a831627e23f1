package dev.idem.testkit.internal;

import dev.idem.testkit.PostgresDatabase;
import java.util.Optional;

/**
 * The outcome of looking for PostgreSQL: the database, or why there is none.
 *
 * @param database the database when one answered
 * @param reason   what was tried and what failed; empty when a database answered
 */
public record PostgresProbe(Optional<PostgresDatabase> database, String reason) {

    static PostgresProbe found(PostgresDatabase database) {
        return new PostgresProbe(Optional.of(database), "");
    }

    static PostgresProbe missing(String reason) {
        return new PostgresProbe(Optional.empty(), reason);
    }
}
