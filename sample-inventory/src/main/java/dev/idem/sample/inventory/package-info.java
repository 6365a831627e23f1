/**
 * The inventory service: a Micronaut application that deducts stock once per paid order. Orders
 * ({@link dev.idem.sample.inventory.Order}) arrive on Kafka (and RocketMQ when configured); the
 * listener ({@link dev.idem.sample.inventory.OrderPaidListener}) runs the deduction in one
 * transaction with Idem's ledger row; a rejected order goes to the dead letter and is refunded
 * ({@link dev.idem.sample.inventory.Refunds}). {@link dev.idem.sample.inventory.StockController}
 * answers {@code GET /stock/{sku}} and {@code GET /stats}.
 */
package dev.idem.sample.inventory;
