package dev.idem.benchmarks.soak;

/**
 * What a soak id does to its handler, written as the id's first letter so every process reads it
 * from the payload alone: {@code g} applies at once, {@code t} fails its first two attempts, {@code p}
 * always fails and must end in the dead-letter topic with one compensation.
 */
enum Kind {
    GOOD('g'),
    TRANSIENT('t'),
    POISON('p');

    // Attempts a transient id fails before it applies: two, so it retries twice and still applies
    // well within the five attempts.
    static final int TRANSIENT_FAILURES = 2;

    private final char letter;

    Kind(char letter) {
        this.letter = letter;
    }

    /** The id of the {@code n}-th message of this kind's run. */
    String id(long n) {
        return letter + String.format("%07d", n);
    }

    /** @throws IllegalArgumentException for an id of no kind */
    static Kind of(String id) {
        for (Kind kind : values()) {
            if (!id.isEmpty() && id.charAt(0) == kind.letter) {
                return kind;
            }
        }
        throw new IllegalArgumentException("not a soak id: '" + id + "'");
    }

    /** Whether ids of this kind must be applied (once). */
    boolean applies() {
        return this != POISON;
    }
}
