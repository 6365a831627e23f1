package dev.idem.spring.wrapped;

import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.serialization.Deserializer;

/** Text, except the bytes {@code undecodable}, which it refuses (as a JSON deserializer refuses bad JSON). */
public class StrictDeserializer implements Deserializer<String> {

    @Override
    public String deserialize(String topic, byte[] data) {
        String text = data == null ? null : new String(data, StandardCharsets.UTF_8);
        if ("undecodable".equals(text)) {
            throw new IllegalArgumentException("not an order: " + text);
        }
        return text;
    }
}
