package dev.idem.sample.inventory;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micronaut.context.annotation.Value;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.annotation.ExecuteOn;
import io.micronaut.serde.annotation.Serdeable;
import io.micronaut.transaction.TransactionOperations;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Optional;

/** {@code GET /stock/{sku}} and {@code GET /stats}, read from the database (blocking, off the event loop). */
@Controller
@ExecuteOn(TaskExecutors.BLOCKING)
public class StockController {

    private final TransactionOperations<Connection> transactions;
    private final MeterRegistry meters;
    private final Optional<NaiveOrderConsumer> naive;
    private final String ledgerTable;

    StockController(TransactionOperations<Connection> transactions, MeterRegistry meters,
                    Optional<NaiveOrderConsumer> naive, @Value("${idem.ledger.table:idem_effect}") String ledgerTable) {
        this.transactions = transactions;
        this.meters = meters;
        this.naive = naive;
        this.ledgerTable = ledgerTable;
    }

    /** A SKU's available stock; 404 for an unknown SKU. */
    @Get("/stock/{sku}")
    public HttpResponse<Level> stock(String sku) {
        Optional<Integer> available = transactions.executeRead(status -> Stock.available(status.getConnection(), sku));
        return available.map(a -> HttpResponse.ok(new Level(sku, a))).orElseGet(HttpResponse::notFound);
    }

    /** Applied, duplicates, dead letters and compensations (see {@link Stats}). */
    @Get("/stats")
    public Stats stats() {
        return transactions.executeRead(status -> {
            Connection connection = status.getConnection();
            long deadLetters = naive.isPresent() ? naive.get().deadLetters() : deadInLedger(connection);
            return new Stats(Stock.count(connection, "deduction"), duplicates(), deadLetters,
                    Stock.count(connection, "refund"));
        });
    }

    private long deadInLedger(Connection connection) throws java.sql.SQLException {
        try (Statement s = connection.createStatement();
             ResultSet rs = s.executeQuery("select count(*) from " + ledgerTable + " where outcome like 'dead%'")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private long duplicates() {
        return (long) meters.find("idem.outcomes").tag("outcome", "duplicate").counters().stream()
                .mapToDouble(Counter::count).sum();
    }

    /**
     * A SKU's stock.
     *
     * @param sku       the SKU
     * @param available units available
     */
    @Serdeable
    public record Level(String sku, int available) {
    }
}
