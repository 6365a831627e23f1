package dev.idem.testkit;

import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Names unique to one test, so tests sharing a broker or a Redis never see each other's data.
 * The names are built from the test's method name plus a random suffix, and use only characters
 * that Kafka topics, RocketMQ topics and groups, and Redis keys all accept. Immutable.
 */
public final class TestNames {

    // RocketMQ topics are limited to 127 characters; leave room for suffixes and "%RETRY%".
    private static final int MAX_BASE_LENGTH = 48;

    private final String base;

    private TestNames(String base) {
        this.base = base;
    }

    /**
     * Names for a test called {@code testName}.
     *
     * @throws IllegalArgumentException if {@code testName} is blank
     */
    public static TestNames forTest(String testName) {
        if (testName == null || testName.isBlank()) {
            throw new IllegalArgumentException("testName must not be blank but was '" + testName + "'");
        }
        String cleaned = testName.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-").replaceAll("^-|-$", "");
        if (cleaned.length() > MAX_BASE_LENGTH) {
            cleaned = cleaned.substring(0, MAX_BASE_LENGTH);
        }
        String suffix = Long.toString(ThreadLocalRandom.current().nextLong(1L << 40), 36);
        return new TestNames((cleaned.isEmpty() ? "test" : cleaned) + "-" + suffix);
    }

    /** The test's topic name. */
    public String topic() {
        return base;
    }

    /** Another topic name for the same test, e.g. {@code topic("orders")}. */
    public String topic(String qualifier) {
        return base + "-" + qualifier;
    }

    /** The test's consumer group name. */
    public String group() {
        return base + "-group";
    }

    /** Another consumer group name for the same test. */
    public String group(String qualifier) {
        return base + "-group-" + qualifier;
    }

    /** A Redis key prefix for the test, ending with a colon. */
    public String keyPrefix() {
        return "idem-test:" + base + ":";
    }

    @Override
    public String toString() {
        return base;
    }
}
