package dev.idem.benchmarks;

import java.nio.charset.StandardCharsets;

/** The benchmark's message: an order of about 200 bytes of JSON. */
final class Payloads {

    private static final String PADDING = "x".repeat(200);

    private Payloads() {
    }

    static byte[] order(int i) {
        String json = String.format("{\"id\":\"order-%08d\",\"sku\":\"SKU-%05d\",\"quantity\":1,\"warehouse\":\"eu-1\","
                + "\"note\":\"", i, i % 10_000);
        return (json + PADDING.substring(0, 200 - json.length() - 2) + "\"}").getBytes(StandardCharsets.UTF_8);
    }
}
