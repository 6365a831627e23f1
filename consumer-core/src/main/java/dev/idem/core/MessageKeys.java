package dev.idem.core;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/** Turns a broker's message key into key text without losing a byte (see {@link KeySource#messageKey()}). */
final class MessageKeys {

    static final String BINARY_PREFIX = "b64:";

    private MessageKeys() {
    }

    static String text(byte[] key) {
        if (key == null || key.length == 0) {
            return null;
        }
        try {
            String text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(key)).toString();
            // Control characters (NUL above all) are refused by databases and hide in logs.
            if (text.chars().noneMatch(Character::isISOControl) && !text.startsWith(BINARY_PREFIX)) {
                return text;
            }
        } catch (CharacterCodingException e) {
            // Not text: encoded below.
        }
        return BINARY_PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(key);
    }
}
