package dev.idem.sample.inventory;

/**
 * The setting {@code inventory.guards}: {@code on} (default) runs the orders through Idem (Redis
 * claim, JDBC ledger, dead letter, compensation once) on tables with a unique order id; {@code off}
 * runs {@link NaiveOrderConsumer}, a plain at-least-once consumer without any of them. Only the
 * demo's "the oracle can fail" run sets it off.
 */
public final class Guards {

    /** The property. */
    public static final String PROPERTY = "inventory.guards";
    /** The value that turns the guards off. */
    public static final String OFF = "off";

    private Guards() {
    }
}
