package dev.idem.micronaut.app;

import io.micronaut.serde.annotation.Serdeable;

/** The test application's message: {@code failures} times the handler throws before it applies; -1 always. */
@Serdeable
public record Order(String id, int quantity, int failures) {
}
