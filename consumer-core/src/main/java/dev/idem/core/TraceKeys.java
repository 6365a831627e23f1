package dev.idem.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import org.jspecify.annotations.Nullable;

/**
 * Whether a message's span carries its idempotency key ({@code idem.key}). Keys are often business
 * data (an order id, an account, an e-mail address), and a tracing backend keeps them for as long as
 * it keeps spans, readable by whoever reads traces: so none by default.
 */
public enum TraceKeys {
    /** No key on spans. The default. */
    OFF,
    /**
     * The first 16 hexadecimal digits of a SHA-256 of the key's group, topic and value: the spans of
     * one key can be found together, and the key cannot be read back.
     */
    HASHED,
    /** The key's value as it is. */
    PLAIN;

    /** What a span carries for {@code key} under this setting; null for {@link #OFF}. */
    public @Nullable String attribute(IdempotencyKey key) {
        return switch (this) {
            case OFF -> null;
            case HASHED -> hash(key);
            case PLAIN -> key.value();
        };
    }

    /** The {@link #HASHED} form of {@code key}, to look up one key's spans. */
    public static String hash(IdempotencyKey key) {
        MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
        for (String part : new String[] {key.group(), key.topic(), key.value()}) {
            sha.update(part.getBytes(StandardCharsets.UTF_8));
            sha.update((byte) 0);
        }
        return HexFormat.of().formatHex(sha.digest(), 0, 8);
    }
}
