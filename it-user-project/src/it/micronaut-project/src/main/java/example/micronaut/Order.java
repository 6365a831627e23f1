package example.micronaut;

import io.micronaut.serde.annotation.Serdeable;

/** An order as the producers send it, in JSON. */
@Serdeable
public record Order(String id, String sku, int quantity) {
}
