package dev.idem.sample.inventory;

import io.micronaut.serde.annotation.Serdeable;

/**
 * What {@code GET /stats} answers.
 *
 * @param applied       deductions in the database (one per applied order)
 * @param duplicates    copies this instance found already applied since it started (Idem's
 *                      {@code duplicate} outcomes; Idem keeps no durable count of them)
 * @param deadLetters   orders dead-lettered: Idem's ledger rows marked dead (guards off: this
 *                      instance's dead letters since it started)
 * @param compensations refunds in the database
 */
@Serdeable
public record Stats(long applied, long duplicates, long deadLetters, long compensations) {
}
