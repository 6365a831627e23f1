package dev.idem.rocketmq.internal;

import dev.idem.core.Envelope;
import dev.idem.core.KeyText;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;

/** Turns RocketMQ messages into envelopes. */
public final class RocketMqEnvelopes {

    private static final byte[] EMPTY = new byte[0];

    private RocketMqEnvelopes() {
    }

    /**
     * The envelope of a message: queue id and queue offset as partition and position, the unique
     * message id (stable across redeliveries), user properties as headers (RocketMQ's own are
     * left out; a value starting with {@code b64:} is encoded by {@link KeyText#headerText(String)}),
     * {@code reconsumeTimes + 1} as the broker's attempt count, the keys as message key, the born
     * time as timestamp, and the message itself as the source.
     */
    // NullAway reads a nullable array (byte @Nullable []) from another module's classes only in its
    // JSpecify mode, which fails on Java 17: the key passed here may be null, as the record says.
    @SuppressWarnings("NullAway")
    public static Envelope of(MessageExt message) {
        Map<String, String> headers = new HashMap<>();
        message.getProperties().forEach((name, value) -> {
            if (!MessageConst.STRING_HASH_SET.contains(name) && value != null) {
                headers.put(name, KeyText.headerText(value));
            }
        });
        String keys = message.getKeys();
        return new Envelope(message.getTopic(), message.getQueueId(), Long.toString(message.getQueueOffset()),
                message.getMsgId(), message.getReconsumeTimes() + 1, headers,
                message.getBody() == null ? EMPTY : message.getBody(),
                keys == null || keys.isEmpty() ? null : keys.getBytes(StandardCharsets.UTF_8),
                message.getBornTimestamp() <= 0 ? null : Instant.ofEpochMilli(message.getBornTimestamp()), message);
    }
}
