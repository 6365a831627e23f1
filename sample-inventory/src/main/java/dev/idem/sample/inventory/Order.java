package dev.idem.sample.inventory;

import io.micronaut.serde.annotation.Serdeable;

/**
 * An {@code order-paid} event: take {@code quantity} of {@code sku} for {@code orderId}.
 *
 * @param orderId  the business key: one deduction per order
 * @param sku      the stock-keeping unit
 * @param quantity how many, at least 1
 */
@Serdeable
public record Order(String orderId, String sku, int quantity) {
}
