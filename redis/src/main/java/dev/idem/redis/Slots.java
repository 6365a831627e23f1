package dev.idem.redis;

import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/** Redis Cluster hash slots (CRC16/XMODEM of the key or its {hash tag}, mod 16384). */
final class Slots {

    static final int SLOTS = 16384;
    // For each slot, a short hash tag that maps to it: lets a script's extra key (the epoch) live in
    // the slot of the records it is called with. Built once, on first use in cluster mode.
    private static volatile String @Nullable [] tags;

    private Slots() {
    }

    static int of(String key) {
        int open = key.indexOf('{');
        if (open >= 0) {
            int close = key.indexOf('}', open + 1);
            if (close > open + 1) {
                key = key.substring(open + 1, close);
            }
        }
        int crc = 0;
        for (byte b : key.getBytes(StandardCharsets.UTF_8)) {
            crc ^= (b & 0xff) << 8;
            for (int i = 0; i < 8; i++) {
                crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1;
            }
        }
        return (crc & 0xffff) % SLOTS;
    }

    /** A hash tag, {@code {tag}}, that puts a key in {@code slot}. */
    static String tag(int slot) {
        String[] table = tags;
        if (table == null) {
            table = new String[SLOTS];
            int found = 0;
            for (int i = 0; found < SLOTS; i++) {
                String candidate = Integer.toString(i, 36);
                int s = of(candidate);
                if (table[s] == null) {
                    table[s] = candidate;
                    found++;
                }
            }
            tags = table;
        }
        return "{" + table[slot] + "}";
    }
}
