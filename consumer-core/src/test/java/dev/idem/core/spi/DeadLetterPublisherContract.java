package dev.idem.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.DeadLetter;
import dev.idem.core.DeadLetterHeaders;
import dev.idem.core.DeadLetterRouting;
import dev.idem.core.Envelope;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.internal.Failures;
import dev.idem.testkit.TestNames;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * What a reader of the dead-letter topic sees, whichever broker: the header contract of the README
 * ("Dead-letter messages"). Subclasses put the publisher on a real broker, send originals through
 * it as a producer would, hand them over as the adapter's consumer does, and read the dead-letter
 * topic back; the same tests run against Kafka and RocketMQ.
 */
public abstract class DeadLetterPublisherContract {

    private static final Instant FIRST_FAILURE = Instant.parse("2026-03-01T10:15:30.123Z");
    private static final Instant LAST_FAILURE = Instant.parse("2026-03-01T10:16:02.456Z");
    private static final String KEY = "order-42:deduct";

    private final List<AutoCloseable> publishers = new ArrayList<>();
    private TestNames names;
    private String source;

    /** An original message as a producer sends it: a text key (or null), any body, text headers. */
    public record Original(String key, byte[] body, Map<String, String> headers) {
    }

    /** A dead-letter message as its reader sees it; headers in arrival order, values as UTF-8 text. */
    public record Received(byte[] key, byte[] body, List<Map.Entry<String, String>> headers) {

        /** Idem's headers, each name once (a repeated one fails the test). */
        public Map<String, String> idemHeaders() {
            Map<String, String> idem = new LinkedHashMap<>();
            headers.stream().filter(h -> DeadLetterHeaders.isIdemHeader(h.getKey())).forEach(h ->
                    assertThat(idem.put(h.getKey(), h.getValue())).as("a second %s header", h.getKey()).isNull());
            return idem;
        }

        /** The original's headers, without Idem's. */
        public List<Map.Entry<String, String>> originalHeaders() {
            return headers.stream().filter(h -> !DeadLetterHeaders.isIdemHeader(h.getKey())).toList();
        }
    }

    /** Creates a topic with one partition (queue) on the broker. */
    protected abstract void createTopic(String topic) throws Exception;

    /**
     * Sends {@code original} to {@code topic}, consumes it, and returns it as the adapter's consumer
     * hands it to the processor (with the broker's own message as its source).
     */
    protected abstract Envelope sendAndConsume(String topic, Original original) throws Exception;

    /** A started publisher on the broker, routing as told. */
    protected abstract DeadLetterPublisher publisher(DeadLetterRouting routing) throws Exception;

    /** The broker's usual dead-letter suffix: {@code ".DLT"}, {@code "_DLQ"}. */
    protected abstract String deadLetterSuffix();

    /** The first message on {@code topic}, read from its beginning, waited for. */
    protected abstract Received readFirst(String topic) throws Exception;

    @BeforeEach
    void freshTopics(TestInfo test) throws Exception {
        names = TestNames.forTest(test.getTestMethod().orElseThrow().getName());
        source = names.topic();
        createTopic(source);
        createTopic(deadLetterTopic());
    }

    @AfterEach
    void closePublishers() throws Exception {
        for (AutoCloseable publisher : publishers) {
            publisher.close();
        }
    }

    /** The test's source topic. */
    protected String source() {
        return source;
    }

    /** The test's names, for topics of its own. */
    protected TestNames names() {
        return names;
    }

    /** The source topic's dead-letter topic under the usual suffix. */
    protected String deadLetterTopic() {
        return source + deadLetterSuffix();
    }

    /** A publisher with the usual suffix, closed after the test. */
    protected DeadLetterPublisher publisher() throws Exception {
        return closedAfterTest(publisher(DeadLetterRouting.suffix(deadLetterSuffix())));
    }

    private DeadLetterPublisher closedAfterTest(DeadLetterPublisher publisher) {
        if (publisher instanceof AutoCloseable closeable) {
            publishers.add(closeable);
        }
        return publisher;
    }

    /** A dead letter of {@code envelope}, after {@code attempts}, with {@code failure} (or none). */
    protected DeadLetter letter(Envelope envelope, int attempts, String reason, Throwable failure) {
        return new DeadLetter(new IdempotencyKey(names.group(), envelope.topic(), KEY), 1L, envelope, attempts, reason,
                failure == null ? "" : failure.getClass().getName(), Failures.message(failure),
                failure == null ? "" : Failures.stackTrace(failure), FIRST_FAILURE, LAST_FAILURE);
    }

    private static Map<String, String> headers(String... namesAndValues) {
        Map<String, String> headers = new LinkedHashMap<>();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            headers.put(namesAndValues[i], namesAndValues[i + 1]);
        }
        return headers;
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static final String TRACE_PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    @Test
    void aDeadLetterCarriesEveryIdemHeaderOfTheContractWithItsValue() throws Exception {
        // Given a consumed message whose handler failed five times
        Envelope original = sendAndConsume(source, new Original("order-42", utf8("{\"id\":\"order-42\"}"), Map.of()));
        Exception failure = new IllegalStateException("no such warehouse: Düsseldorf", new IOException("disk"));
        DeadLetter untraced = letter(original, 5, "attempts exhausted", failure);
        DeadLetter letter = new DeadLetter(untraced.key(), untraced.fence(), untraced.envelope(), untraced.attempts(),
                untraced.reason(), untraced.exceptionClass(), untraced.exceptionMessage(), untraced.stackTrace(),
                untraced.firstFailureAt(), untraced.lastFailureAt(), TRACE_PARENT);

        // When it is published
        publisher().publish(letter);

        // Then the reader finds every header of the contract, with these values, once
        assertThat(readFirst(deadLetterTopic()).idemHeaders()).containsExactlyInAnyOrderEntriesOf(Map.ofEntries(
                Map.entry("idem-original-topic", source),
                Map.entry("idem-original-partition", Integer.toString(original.partition())),
                Map.entry("idem-original-offset", original.position()),
                Map.entry("idem-original-message-id", original.messageId()),
                Map.entry("idem-consumer-group", names.group()),
                Map.entry("idem-idempotency-key", KEY),
                Map.entry("idem-compensation-id", letter.compensationId()),
                Map.entry("idem-attempts", "5"),
                Map.entry("idem-reason", "attempts exhausted"),
                Map.entry("idem-exception-class", IllegalStateException.class.getName()),
                Map.entry("idem-exception-message", "no such warehouse: Düsseldorf"),
                Map.entry("idem-exception-stacktrace", Failures.stackTrace(failure)),
                Map.entry("idem-first-failure-at", "2026-03-01T10:15:30.123Z"),
                Map.entry("idem-last-failure-at", "2026-03-01T10:16:02.456Z"),
                // Idem's own frames are not the application's: no idem-failure-site for this failure.
                Map.entry("idem-failure-group", letter.failureGroup().fingerprint()),
                Map.entry("idem-traceparent", TRACE_PARENT)));
        assertThat(letter.stackTrace()).as("a multi-line stack trace as long as Idem keeps").hasSizeGreaterThan(3_000)
                .contains("\n\tat ");
    }

    @Test
    void idemHeadersWithoutAValueAreLeftOutRatherThanSentBlank() throws Exception {
        // Given a message dead-lettered without an exception (it had no idempotency key)
        Envelope original = sendAndConsume(source, new Original(null, utf8("{}"), Map.of()));

        // When it is published
        publisher().publish(letter(original, 0, "no idempotency key", null));

        // Then the exception headers are absent and no header is blank
        Received received = readFirst(deadLetterTopic());
        assertThat(received.idemHeaders()).doesNotContainKeys("idem-exception-class", "idem-exception-message",
                "idem-exception-stacktrace").containsEntry("idem-reason", "no idempotency key")
                .containsEntry("idem-attempts", "0");
        assertThat(received.headers()).allSatisfy(h -> assertThat(h.getValue()).as(h.getKey()).isNotBlank());
    }

    @Test
    void theOriginalKeyBodyAndHeadersArriveUnchanged() throws Exception {
        // Given a message with a non-ASCII key, a binary body and headers of its own
        byte[] body = {0x00, (byte) 0xff, 0x7b, (byte) 0xc3, 0x28, 0x0a, 0x00};
        Map<String, String> headers = headers("trace-id", "4bf92f35", "tenant", "zürich", "content-type", "application/x");
        Envelope original = sendAndConsume(source, new Original("ordre-été-42", body, headers));

        // When it is dead-lettered
        publisher().publish(letter(original, 5, "attempts exhausted", new IllegalStateException("boom")));

        // Then the reader gets the key and the body byte for byte, and the headers with their values
        Received received = readFirst(deadLetterTopic());
        assertThat(received.key()).isEqualTo(utf8("ordre-été-42"));
        assertThat(received.body()).isEqualTo(body);
        assertThat(received.originalHeaders()).containsExactlyInAnyOrderElementsOf(headers.entrySet());
    }

    @Test
    void aMessageDeadLetteredAgainCarriesOneSetOfIdemHeadersTheNewest() throws Exception {
        // Given a message replayed from a dead-letter topic: it carries an earlier letter's headers
        Envelope original = sendAndConsume(source, new Original("order-42", utf8("{}"), headers(
                "trace-id", "4bf92f35", "idem-reason", "attempts exhausted", "idem-exception-class", "OldFailure",
                "idem-attempts", "5")));

        // When it is dead-lettered again, this time without an exception
        publisher().publish(letter(original, 0, "no idempotency key", null));

        // Then only the new letter's headers are there, each once, and the original's own ones stay
        Received received = readFirst(deadLetterTopic());
        assertThat(received.idemHeaders()).containsEntry("idem-reason", "no idempotency key")
                .containsEntry("idem-attempts", "0").doesNotContainKey("idem-exception-class");
        assertThat(received.originalHeaders()).containsExactly(Map.entry("trace-id", "4bf92f35"));
    }

    @Test
    void aLetterGoesToTheTopicItsRoutingNames() throws Exception {
        String parking = names.topic("parking");
        createTopic(parking);
        Envelope original = sendAndConsume(source, new Original("order-42", utf8("{}"), Map.of()));

        closedAfterTest(publisher(DeadLetterRouting.fixed(parking)))
                .publish(letter(original, 5, "attempts exhausted", new IllegalStateException("boom")));

        assertThat(readFirst(parking).idemHeaders()).containsEntry("idem-original-topic", source);
    }

    @Test
    void aHandMadeEnvelopeArrivesWithItsKeyBodyAndTextHeaders() throws Exception {
        // Given an envelope that did not come from a consumer (no native message), with a blank header
        Envelope handMade = new Envelope(source, 0, "17", "hand-made-17", 0,
                headers("trace-id", "4bf92f35", "blank", " "), utf8("{\"id\":\"order-42\"}"), utf8("order-42"));

        // When it is dead-lettered
        publisher().publish(letter(handMade, 1, "non-retryable failure", new IllegalArgumentException("bad sku")));

        // Then its key, body and non-blank headers arrive, with Idem's
        Received received = readFirst(deadLetterTopic());
        assertThat(received.key()).isEqualTo(utf8("order-42"));
        assertThat(received.body()).isEqualTo(utf8("{\"id\":\"order-42\"}"));
        assertThat(received.originalHeaders()).containsExactly(Map.entry("trace-id", "4bf92f35"));
        assertThat(received.idemHeaders()).containsEntry("idem-original-offset", "17")
                .containsEntry("idem-original-message-id", "hand-made-17")
                .containsEntry("idem-reason", "non-retryable failure");
    }

    @Test
    void aLetterTheBrokerCannotTakeFailsThePublishInsteadOfVanishing() throws Exception {
        Envelope original = sendAndConsume(source, new Original("order-42", utf8("{}"), Map.of()));
        DeadLetterPublisher refused = closedAfterTest(publisher(DeadLetterRouting.fixed("no such topic!")));

        assertThatThrownBy(() -> refused.publish(letter(original, 5, "attempts exhausted", null)))
                .isInstanceOf(Exception.class);
    }
}
