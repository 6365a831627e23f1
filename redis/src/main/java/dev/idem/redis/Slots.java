package dev.idem.redis;

import java.nio.charset.StandardCharsets;

/** Redis Cluster hash slots (CRC16/XMODEM of the key or its {hash tag}, mod 16384). */
final class Slots {

    private static final int SLOTS = 16384;

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
}
