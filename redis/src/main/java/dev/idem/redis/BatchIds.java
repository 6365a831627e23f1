package dev.idem.redis;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Batch ids: 9 random characters of [0-9A-Za-z] (53 bits; with a key's two-character place, a compact
 * value of 12 bytes, jemalloc's smallest class); a batch record is created NX, so a clash is refused.
 */
final class BatchIds {

    private static final char[] DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".toCharArray();
    static final int LENGTH = 9;

    private BatchIds() {
    }

    static String next() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        char[] id = new char[LENGTH];
        for (int i = 0; i < LENGTH; i++) {
            id[i] = DIGITS[random.nextInt(DIGITS.length)];
        }
        return new String(id);
    }
}
