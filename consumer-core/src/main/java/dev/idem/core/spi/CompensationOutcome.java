package dev.idem.core.spi;

import java.util.Objects;

/**
 * Where a dead-lettered key's compensation stands, as claim stores and business checks record it:
 * pending (running, or cut off by a crash), ran and returned, or ran and failed every try. Its
 * {@link #text()} is what a store writes and {@link #parse} reads back. Immutable.
 *
 * @param status  pending, ok or failed
 * @param failure what the last try threw, for {@link Status#FAILED}; empty otherwise
 */
public record CompensationOutcome(Status status, String failure) {

    /** The states of a compensation. */
    public enum Status { PENDING, OK, FAILED }

    /** No outcome yet: running, or cut off by a crash (a copy of the message takes it over). */
    public static final CompensationOutcome PENDING = new CompensationOutcome(Status.PENDING, "");
    /** The hook ran and returned. */
    public static final CompensationOutcome OK = new CompensationOutcome(Status.OK, "");

    private static final String FAILED_PREFIX = "failed: ";

    /** @throws NullPointerException if a component is null; {@link IllegalArgumentException} for a failure text on another status */
    public CompensationOutcome {
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(failure, "failure");
        if (status != Status.FAILED && !failure.isEmpty()) {
            throw new IllegalArgumentException("only a failed compensation has a failure text, not " + status);
        }
    }

    /** The hook failed every try; {@code failure} says how the last one failed. */
    public static CompensationOutcome failed(String failure) {
        return new CompensationOutcome(Status.FAILED, failure);
    }

    /** Whether the compensation has no outcome yet. */
    public boolean isPending() {
        return status == Status.PENDING;
    }

    /** The recorded form: {@code pending}, {@code ok}, or {@code failed: } and the failure. */
    public String text() {
        return switch (status) {
            case PENDING -> "pending";
            case OK -> "ok";
            case FAILED -> FAILED_PREFIX + failure;
        };
    }

    /**
     * Reads a recorded form back.
     *
     * @throws IllegalArgumentException for text no store writes
     */
    public static CompensationOutcome parse(String text) {
        if ("pending".equals(text)) {
            return PENDING;
        }
        if ("ok".equals(text)) {
            return OK;
        }
        if (text != null && text.startsWith(FAILED_PREFIX)) {
            return failed(text.substring(FAILED_PREFIX.length()));
        }
        if ("failed".equals(text)) {
            return failed("");
        }
        throw new IllegalArgumentException("not a compensation outcome: '" + text + "'");
    }

    @Override
    public String toString() {
        return text();
    }
}
