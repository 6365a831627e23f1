package dev.idem.cli;

import java.nio.charset.StandardCharsets;

/** The test topics' payload. */
record Order(String id, int quantity) {

    byte[] json() {
        return ("{\"id\":\"" + id + "\",\"quantity\":" + quantity + "}").getBytes(StandardCharsets.UTF_8);
    }
}
