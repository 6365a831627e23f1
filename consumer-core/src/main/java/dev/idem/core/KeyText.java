package dev.idem.core;

import org.jspecify.annotations.Nullable;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * The one rule that turns a key's bytes or text into the key text Idem stores, for every key
 * source: text that any store keeps as it is (well-formed UTF-16, no control characters, not
 * starting with {@code b64:}) is used as it is; anything else (bytes that are not UTF-8, a NUL, a
 * lone surrogate from JSON, text that starts with {@code b64:}) is {@code b64:} and the URL-safe
 * Base64 of its bytes. Two different keys never become one, and the original can always be read
 * back. Stateless; thread-safe.
 */
public final class KeyText {

    /** The prefix of a key whose bytes are stored in Base64. */
    public static final String BINARY_PREFIX = "b64:";

    private KeyText() {
    }

    /** The key text of {@code bytes}; null for null or no bytes (no key). */
    public static @Nullable String of(byte @Nullable [] bytes) {
        if (bytes == null || bytes.length == 0) {
            return null;
        }
        String text = strictUtf8(bytes);
        return text != null && keptAsIs(text) ? text : encoded(bytes);
    }

    /**
     * The key text of {@code text}: itself when stores keep it as it is, else the Base64 of its
     * bytes, a lone surrogate written as the three bytes UTF-8 would give its code point (so
     * {@code "\ud800"} and {@code "\ud801"} stay two keys). Null stays null.
     */
    public static @Nullable String of(@Nullable String text) {
        if (text == null || keptAsIs(text)) {
            return text;
        }
        return encoded(bytesOf(text));
    }

    /**
     * A header value as the envelope's text: the value itself when it is UTF-8 text that does not
     * start with {@code b64:}, else {@code b64:} and its Base64, so two values never read the same
     * (control characters are kept here: {@link KeySource#header} encodes them when the header is a
     * key). Null or no bytes is the empty text.
     */
    public static String headerText(byte[] value) {
        if (value == null || value.length == 0) {
            return "";
        }
        String text = strictUtf8(value);
        return text != null && !text.startsWith(BINARY_PREFIX) ? text : encoded(value);
    }

    /** A header value that is already text (a RocketMQ user property) as the envelope's text, by {@link #headerText(byte[])}. */
    public static String headerText(String value) {
        return value == null || !value.startsWith(BINARY_PREFIX) ? value : encoded(bytesOf(value));
    }

    /** Whether {@code key} is the Base64 form of bytes, rather than text kept as it is. */
    public static boolean isEncoded(@Nullable String key) {
        return key != null && key.startsWith(BINARY_PREFIX);
    }

    // Control characters (NUL above all) are refused by databases and hide in logs; a lone surrogate
    // becomes '?' in UTF-8, so two of them would be one key.
    private static boolean keptAsIs(String text) {
        if (text.startsWith(BINARY_PREFIX)) {
            return false;
        }
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isISOControl(c)) {
                return false;
            }
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return false;
            }
        }
        return true;
    }

    /** UTF-8, with a lone surrogate encoded like any other code point (WTF-8): one byte string per text. */
    private static byte[] bytesOf(String text) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(text.length() + 8);
        for (int i = 0; i < text.length(); ) {
            int cp = text.codePointAt(i);
            i += Character.charCount(cp);
            if (cp < 0x80) {
                out.write(cp);
            } else if (cp < 0x800) {
                out.write(0xC0 | (cp >> 6));
                out.write(0x80 | (cp & 0x3F));
            } else if (cp < 0x10000) {
                out.write(0xE0 | (cp >> 12));
                out.write(0x80 | ((cp >> 6) & 0x3F));
                out.write(0x80 | (cp & 0x3F));
            } else {
                out.write(0xF0 | (cp >> 18));
                out.write(0x80 | ((cp >> 12) & 0x3F));
                out.write(0x80 | ((cp >> 6) & 0x3F));
                out.write(0x80 | (cp & 0x3F));
            }
        }
        return out.toByteArray();
    }

    /** The bytes as UTF-8 text, or null when they are not UTF-8. */
    private static @Nullable String strictUtf8(byte[] bytes) {
        boolean ascii = true;
        for (byte b : bytes) {
            ascii &= b >= 0;
        }
        if (ascii) {
            // The usual header or key (ids, trace context): valid UTF-8, no decoder to allocate.
            return new String(bytes, StandardCharsets.US_ASCII);
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    private static String encoded(byte[] bytes) {
        return BINARY_PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }
}
