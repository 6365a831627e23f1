package dev.idem.benchmarks;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/** The benchmark's messages: an order of about 200 bytes of JSON, or a timed one for latency runs. */
final class Payloads {

    private static final String PADDING = "x".repeat(200);

    private Payloads() {
    }

    static byte[] order(int i) {
        String json = String.format("{\"id\":\"order-%08d\",\"sku\":\"SKU-%05d\",\"quantity\":1,\"warehouse\":\"eu-1\","
                + "\"note\":\"", i, i % 10_000);
        return (json + PADDING.substring(0, 200 - json.length() - 2) + "\"}").getBytes(StandardCharsets.UTF_8);
    }

    /** An order of the same size whose first 8 bytes are {@link System#nanoTime()} as it is built. */
    static byte[] timed(int i) {
        byte[] order = order(i);
        ByteBuffer.wrap(order).putLong(0, System.nanoTime());
        return order;
    }
}
