package dev.idem.spring.app;

/** An order: {@code kind} is "ok", "flaky" (fails twice) or "poison" (always fails). */
public record Order(String id, String kind) {
}
