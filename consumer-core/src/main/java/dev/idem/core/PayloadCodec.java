package dev.idem.core;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idem.core.internal.JsonCodec;
import java.nio.charset.StandardCharsets;

/**
 * Turns a message body into the handler's payload. A decode failure is fatal: the message goes to
 * the dead letter at once with the reason. Thread-safe.
 *
 * @param <T> payload type
 */
@FunctionalInterface
public interface PayloadCodec<T> {

    /**
     * @throws Exception if the bytes are not a valid payload
     */
    T decode(byte[] body) throws Exception;

    /** The body as it is. */
    static PayloadCodec<byte[]> bytes() {
        return body -> body;
    }

    /** The body as UTF-8 text. */
    static PayloadCodec<String> utf8() {
        return body -> new String(body, StandardCharsets.UTF_8);
    }

    /**
     * JSON into {@code type} with Idem's own Jackson mapper: {@code java.time} types and
     * {@code Optional} are read, unknown properties are ignored, a JSON {@code null} body fails.
     */
    static <T> PayloadCodec<T> json(Class<T> type) {
        return new JsonCodec<>(type);
    }

    /** JSON into {@code type} with the application's own Jackson mapper, as it is configured. */
    static <T> PayloadCodec<T> json(ObjectMapper mapper, Class<T> type) {
        return new JsonCodec<>(mapper, type);
    }
}
