package dev.idem.core.internal;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.datatype.jdk8.Jdk8Module;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import dev.idem.core.PayloadCodec;
import java.io.IOException;
import java.util.Objects;

/** JSON payloads through one shared, thread-safe Jackson reader per type. */
public final class JsonCodec<T> implements PayloadCodec<T> {

    // java.time and Optional support, unknown properties ignored (producers add fields first).
    private static final ObjectMapper MAPPER = new ObjectMapper()
            .registerModule(new JavaTimeModule())
            .registerModule(new Jdk8Module())
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false)
            .configure(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES, true);

    private final ObjectReader reader;
    private final Class<T> type;

    /** @param type the payload class, read with Idem's mapper */
    public JsonCodec(Class<T> type) {
        this(MAPPER, type);
    }

    /**
     * @param mapper the application's mapper, used as it is configured
     * @param type   the payload class
     */
    public JsonCodec(ObjectMapper mapper, Class<T> type) {
        this.type = Objects.requireNonNull(type, "type");
        this.reader = Objects.requireNonNull(mapper, "mapper").readerFor(type);
    }

    @Override
    public T decode(byte[] body) throws IOException {
        T value = reader.readValue(body);
        if (value == null) {
            throw new IOException("body is JSON null, not a " + type.getSimpleName());
        }
        return value;
    }
}
