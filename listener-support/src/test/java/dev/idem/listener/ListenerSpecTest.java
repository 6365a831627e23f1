package dev.idem.listener;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.DedupCheck;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.memory.InMemoryClaimStore;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ListenerSpecTest {

    private static final String WHERE = "app.Orders.onOrder";

    private static InMemoryClaimStore claims() {
        return new InMemoryClaimStore(Clock.systemUTC(), Duration.ofDays(1), Duration.ofDays(1));
    }

    private static ListenerSpec.Builder spec(ListenerBroker broker) {
        return ListenerSpec.builder("orders", WHERE, broker).topic("orders").group("stock")
                .codec(ListenerPayloads.plainCodec(String.class).orElseThrow()).keys(KeySource.messageKey())
                .handler((delivery, tx) -> { });
    }

    @Test
    void propertiesOverTheAnnotationAndWhatNeitherSetsIsLeftUnset() {
        Map<String, String> annotation = Map.of("maxAttempts", "7", "lease", "${resolved}", "concurrency", "0",
                "deadLetterTopic", "");
        Map<String, String> properties = Map.of("max-attempts", "9", "backoff-initial", "2s");
        ListenerSpec spec = spec(ListenerBroker.KAFKA)
                .annotated("@IdempotentListener", member -> Optional.ofNullable(annotation.get(member))
                        .map(v -> v.equals("${resolved}") ? "45s" : v))
                .configured(key -> Optional.ofNullable(properties.get(key))).build();

        assertThat(spec.get(ListenerSetting.MAX_ATTEMPTS)).contains(9);
        assertThat(spec.origin(ListenerSetting.MAX_ATTEMPTS)).isEqualTo("idem.listeners.orders.max-attempts");
        assertThat(spec.get(ListenerSetting.LEASE)).contains(Duration.ofSeconds(45));
        assertThat(spec.origin(ListenerSetting.LEASE)).isEqualTo("@IdempotentListener(lease) on " + WHERE);
        assertThat(spec.get(ListenerSetting.BACKOFF_INITIAL)).contains(Duration.ofSeconds(2));
        // An annotation member at its default (0, empty) sets nothing: the builder's default stays.
        assertThat(spec.get(ListenerSetting.CONCURRENCY)).isEmpty();
        assertThat(spec.get(ListenerSetting.DEAD_LETTER_TOPIC)).isEmpty();
        assertThat(spec.get(ListenerSetting.CLOSE_TIMEOUT)).isEmpty();
    }

    @Test
    void aValueThatIsNotOfItsTypeIsRefusedNamingWhereItWasSet() {
        assertThatThrownBy(() -> spec(ListenerBroker.KAFKA).configured(key -> key.equals("max-attempts")
                ? Optional.of("abc") : Optional.empty()))
                .hasMessage("idem.listeners.orders.max-attempts must be a whole number but was 'abc'");
        assertThatThrownBy(() -> spec(ListenerBroker.KAFKA).annotated("@IdempotentListener",
                member -> member.equals("lease") ? Optional.of("soon") : Optional.empty()))
                .hasMessage("@IdempotentListener(lease) on " + WHERE
                        + " must be a duration like 30s, 500ms, 2m or PT30S but was 'soon'");
        assertThatThrownBy(() -> spec(ListenerBroker.ROCKETMQ).configured(key -> key.equals("consume-from")
                ? Optional.of("middle") : Optional.empty()))
                .hasMessageContaining("consume-from must be one of [last-offset, first-offset] but was 'middle'");
    }

    @Test
    void aValueOutOfRangeIsRefusedBeforeAnythingStarts() {
        assertThatThrownBy(() -> spec(ListenerBroker.KAFKA).configured(key -> key.equals("concurrency")
                ? Optional.of("0") : Optional.empty()))
                .hasMessage("idem.listeners.orders.concurrency must be >= 1 but was 0");
        assertThatThrownBy(() -> spec(ListenerBroker.KAFKA).configured(key -> key.equals("backoff-jitter")
                ? Optional.of("1.5") : Optional.empty()))
                .hasMessage("idem.listeners.orders.backoff-jitter must be between 0 and 1 but was 1.5");
        assertThatThrownBy(() -> spec(ListenerBroker.KAFKA).configuredValues(setting -> setting == ListenerSetting.LEASE
                ? Optional.of(java.time.Duration.ZERO) : Optional.empty()))
                .hasMessage("idem.listeners.orders.lease must be a positive duration but was PT0S");
    }

    @Test
    void durationsAreReadAsSpringBootReadsThem() {
        assertThat(List.of(ListenerSetting.LEASE.parse("45000"), ListenerSetting.LEASE.parse("30S"),
                ListenerSetting.LEASE.parse("PT1M"), ListenerSetting.LEASE.parse("2 m")))
                .containsExactly(Duration.ofSeconds(45), Duration.ofSeconds(30), Duration.ofMinutes(1),
                        Duration.ofMinutes(2));
    }

    @Test
    void aSettingOfAnotherBrokersConsumerIsRefused() {
        assertThatThrownBy(() -> spec(ListenerBroker.KAFKA).configured(key -> key.equals("batch-size")
                ? Optional.of("10") : Optional.empty()))
                .hasMessage("idem.listeners.orders.batch-size is a setting of RocketMQ listeners, and this listener "
                        + "consumes from Kafka");
        assertThatThrownBy(() -> spec(ListenerBroker.ROCKETMQ).configured(key -> key.equals("join-timeout")
                ? Optional.of("1m") : Optional.empty()))
                .hasMessageContaining("join-timeout is a setting of Kafka listeners");
        ListenerSpec rocket = spec(ListenerBroker.ROCKETMQ).configured(key -> switch (key) {
            case "batch-size" -> Optional.of("10");
            case "consume-from" -> Optional.of("first-offset");
            default -> Optional.empty();
        }).build();
        assertThat(rocket.get(ListenerSetting.BATCH_SIZE)).contains(10);
        assertThat(rocket.get(ListenerSetting.CONSUME_FROM)).contains(ConsumeFrom.FIRST_OFFSET);
    }

    @Test
    void aWrappedListenerRefusesTheSettingsOfIdemsOwnConsumers() {
        assertThatThrownBy(() -> spec(ListenerBroker.KAFKA).wrapped("its threads are its container's")
                .configured(key -> key.equals("concurrency") ? Optional.of("4") : Optional.empty()))
                .hasMessage("idem.listeners.orders.concurrency is not a setting of a wrapped listener "
                        + "(its threads are its container's)");
        ListenerSpec wrapped = spec(ListenerBroker.KAFKA).wrapped("its threads are its container's")
                .configured(key -> key.equals("max-deferral") ? Optional.of("5m") : Optional.empty()).build();
        assertThat(wrapped.get(ListenerSetting.MAX_DEFERRAL)).contains(Duration.ofMinutes(5));
    }

    @Test
    void valuesBoundByAFrameworkAreTakenAsTheyAre() {
        ListenerSpec spec = spec(ListenerBroker.KAFKA).configuredValues(setting -> setting == ListenerSetting.LEASE
                ? Optional.of(Duration.ofSeconds(12)) : Optional.empty()).build();
        assertThat(spec.get(ListenerSetting.LEASE)).contains(Duration.ofSeconds(12));
    }

    @Test
    void aProcessorFromASpecThatSetsNothingKeepsEveryDefaultOfTheBuilder() {
        IdempotentProcessor<Object> built = ListenerProcessors.processor(spec(ListenerBroker.KAFKA).ledger(false).build(),
                claims(), null).group("stock").deadLetters(letter -> { }).build();
        IdempotentProcessor<Object> plain = IdempotentProcessor.<Object>builder(delivery -> { })
                .codec(ListenerPayloads.plainCodec(String.class).orElseThrow()).keys(KeySource.messageKey())
                .claims(claims()).dedupCheck(DedupCheck.none()).group("stock").deadLetters(letter -> { }).build();
        assertThat(built.maxAttempts()).isEqualTo(plain.maxAttempts());
        assertThat(built.lease()).isEqualTo(plain.lease());
        built.close();
        plain.close();
    }

    @Test
    void aProcessorTakesWhatTheSpecSets() {
        ListenerSpec spec = spec(ListenerBroker.KAFKA).ledger(false)
                .configured(key -> switch (key) {
                    case "max-attempts" -> Optional.of("3");
                    case "lease" -> Optional.of("10s");
                    default -> Optional.empty();
                }).build();
        try (IdempotentProcessor<Object> built = ListenerProcessors.processor(spec, claims(), null)
                .group("stock").deadLetters(letter -> { }).build()) {
            assertThat(built.maxAttempts()).isEqualTo(3);
            assertThat(built.lease()).isEqualTo(Duration.ofSeconds(10));
        }
    }

    @Test
    void anExceptionNamedFatalByPropertySendsTheMessageToTheDeadLetterAtItsFirstFailure() {
        List<String> deadLetters = new java.util.ArrayList<>();
        ListenerSpec spec = spec(ListenerBroker.KAFKA).ledger(false).handler((delivery, tx) -> {
            throw new java.time.DateTimeException("not a date");
        }).configured(key -> key.equals("fatal-exceptions")
                ? Optional.of("java.lang.ArithmeticException, java.time.DateTimeException") : Optional.empty()).build();
        try (IdempotentProcessor<Object> processor = ListenerProcessors.processor(spec, claims(), null).group("stock")
                .deadLetters(letter -> deadLetters.add(letter.key().value())).build()) {
            processor.process(new dev.idem.core.Envelope("orders", 0, "1", "orders-0@1", 1, Map.of(),
                    "o-1".getBytes(java.nio.charset.StandardCharsets.UTF_8), "o-1".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        }
        assertThat(deadLetters).containsExactly("o-1");
    }

    @Test
    void exceptionClassesMustBeThereAndBeExceptions() {
        assertThatThrownBy(() -> ListenerSetting.FATAL_EXCEPTIONS.parse("com.example.Missing"))
                .hasMessageContaining("names a class that is not there: 'com.example.Missing'");
        assertThatThrownBy(() -> spec(ListenerBroker.KAFKA).configuredValues(setting ->
                setting == ListenerSetting.INFRASTRUCTURE_EXCEPTIONS ? Optional.of(new Class<?>[] {String.class})
                        : Optional.empty()))
                .hasMessage("idem.listeners.orders.infrastructure-exceptions must name exception classes but "
                        + "java.lang.String is none");
    }

    @Test
    void aBackoffThatCannotBeIsRefusedNamingItsSettings() {
        ListenerSpec spec = spec(ListenerBroker.KAFKA).ledger(false)
                .configured(key -> key.equals("backoff-initial") ? Optional.of("2m") : key.equals("backoff-max")
                        ? Optional.of("1m") : Optional.empty()).build();
        assertThatThrownBy(() -> ListenerProcessors.processor(spec, claims(), null))
                .hasMessageContaining("idem.listeners.orders.backoff-*").hasMessageContaining("initial was PT2M");
    }

    @Test
    void aListenerThatAsksForTheTransactionNeedsTheLedger() {
        ListenerSpec spec = spec(ListenerBroker.KAFKA).handler(new ListenerHandler() {
            @Override
            public void invoke(dev.idem.core.Delivery<Object> delivery, java.sql.Connection tx) {
            }

            @Override
            public boolean wantsConnection() {
                return true;
            }
        }).build();
        assertThatThrownBy(() -> ListenerProcessors.processor(spec, claims(), null))
                .hasMessageContaining("takes a Connection, which only the ledger's transaction gives");
    }

    @Test
    void aBlankDeadLetterTopicMeansTheBrokersDefault() {
        ListenerSpec blank = spec(ListenerBroker.KAFKA).configured(key -> key.equals("dead-letter-topic")
                ? Optional.of(" ") : Optional.empty()).build();
        ListenerSpec fixed = spec(ListenerBroker.KAFKA).configured(key -> key.equals("dead-letter-topic")
                ? Optional.of("orders-dead") : Optional.empty()).build();
        assertThat(ListenerProcessors.deadLetterRouting(blank)).isEmpty();
        assertThat(ListenerProcessors.deadLetterRouting(fixed)).hasValueSatisfying(routing ->
                assertThat(routing.deadLetterTopic("orders")).isEqualTo("orders-dead"));
    }

    @Test
    void everySettingHasAKeyAndAMemberOfTheSameName() {
        assertThat(ListenerSetting.all()).extracting(ListenerSetting::member)
                .contains("maxAttempts", "lease", "deadLetterTopic", "maxDeferral", "closeTimeout", "consumeFrom");
        assertThat(ListenerSetting.all()).extracting(ListenerSetting::key).doesNotHaveDuplicates();
        assertThat(List.of(ListenerSetting.MAX_DEFERRAL.parse("30m"), ListenerSetting.LEASE.parse("PT5S")))
                .containsExactly(Duration.ofMinutes(30), Duration.ofSeconds(5));
    }
}
