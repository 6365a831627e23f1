package dev.idem.testkit.internal;

/**
 * A started fixture: the value handed to tests and what stops it at the end of the run.
 *
 * @param value   the object injected into tests
 * @param stopper stops the fixture
 */
public record Started(Object value, AutoCloseable stopper) implements AutoCloseable {

    static <T extends AutoCloseable> Started self(T fixture) {
        return new Started(fixture, fixture);
    }

    static Started unmanaged(Object value) {
        return new Started(value, () -> { });
    }

    @Override
    public void close() throws Exception {
        stopper.close();
    }
}
