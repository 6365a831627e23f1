package dev.idem.cli.commands;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/** JSON output, and payloads shown as an operator can read them. */
final class Json {

    static final ObjectMapper MAPPER = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private Json() {
    }

    static void print(PrintWriter out, Object value) {
        try {
            out.println(MAPPER.writeValueAsString(value));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot print as JSON: " + e.getMessage(), e);
        }
    }

    /** A JSON tree, indented. */
    static String pretty(JsonNode tree) {
        try {
            return MAPPER.writeValueAsString(tree);
        } catch (JsonProcessingException e) {
            return tree.toString();
        }
    }

    /** The bytes as UTF-8 text, if they are. */
    static Optional<String> text(byte @Nullable [] bytes) {
        if (bytes == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString());
        } catch (CharacterCodingException e) {
            return Optional.empty();
        }
    }

    /** The bytes parsed as JSON, if they are JSON. */
    static Optional<JsonNode> tree(byte @Nullable [] bytes) {
        Optional<String> text = text(bytes);
        if (text.isEmpty() || text.get().isBlank()) {
            return Optional.empty();
        }
        String trimmed = text.get().trim();
        if (!trimmed.startsWith("{") && !trimmed.startsWith("[")) {
            return Optional.empty();
        }
        try {
            return Optional.of(MAPPER.readTree(trimmed));
        } catch (JsonProcessingException e) {
            return Optional.empty();
        }
    }

    /** Text as it is, else {@code base64:...}; null for null. */
    static @Nullable String readable(byte @Nullable [] bytes) {
        if (bytes == null) {
            return null;
        }
        return text(bytes).orElseGet(() -> "base64:" + Base64.getEncoder().encodeToString(bytes));
    }
}
