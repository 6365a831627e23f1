package dev.idem.cli.commands;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.cli.CliException;
import dev.idem.cli.Environment;
import dev.idem.cli.Idem;
import dev.idem.cli.letters.DeadLetterTopic;
import dev.idem.cli.letters.KafkaDeadLetterTopic;
import dev.idem.cli.letters.Letter;
import dev.idem.cli.letters.LetterFilter;
import dev.idem.cli.letters.RocketMqDeadLetterTopic;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The filters as an operator types them, parsed by the real command line, and what they select. */
class FilterOptionsTest {

    // 03:00 UTC is 04:00 in Berlin: local times and dates must be read in the operator's zone.
    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-22T03:00:00Z"), ZoneId.of("Europe/Berlin"));

    private static FilterOptions parse(String... filters) {
        Environment environment = new Environment(Map.of(), Path.of("."), "host", "user", CLOCK, false);
        CommandLine commandLine = Idem.commandLine(environment, new PrintWriter(new StringWriter()),
                new PrintWriter(new StringWriter()), false);
        String[] args = new String[filters.length + 6];
        System.arraycopy(new String[] {"dlq", "list", "-b", "kafka", "-t", "orders.DLT"}, 0, args, 0, 6);
        System.arraycopy(filters, 0, args, 6, filters.length);
        CommandLine.ParseResult result = commandLine.parseArgs(args);
        return ((DlqListCommand) result.subcommand().subcommand().commandSpec().userObject()).filter;
    }

    private static LetterFilter kafka(String... filters) {
        return parse(filters).filter(new EntryForm(KafkaDeadLetterTopic::parseEntry));
    }

    private static LetterFilter rocketMq(String... filters) {
        return parse(filters).filter(new EntryForm(RocketMqDeadLetterTopic::parseEntry));
    }

    @Test
    void noFilterSelectsEverythingAndCountsAsNone() {
        LetterFilter filter = kafka();

        assertThat(filter.isEmpty()).isTrue();
        assertThat(filter.matches(letter("0:0", "order-1", "java.lang.IllegalStateException", null))).isTrue();
    }

    @Test
    void entriesAreCommaSeparatedTrimmedAndNormalized() {
        assertThat(kafka("--entry", "0:017, 1:2", "--entry", "2:0").entries()).containsExactlyInAnyOrder("0:17", "1:2", "2:0");
        assertThat(rocketMq("--entry", "broker-a:0:17,broker-b:03:5").entries())
                .containsExactlyInAnyOrder("broker-a:0:17", "broker-b:3:5");
    }

    @Test
    void anEntryInTheOtherBrokersFormOrOutOfRangeIsRefusedNamingTheForm() {
        assertThatThrownBy(() -> kafka("--entry", "17")).isInstanceOf(CliException.class)
                .hasMessage("a Kafka entry is <partition>:<offset>, e.g. 0:17, not '17'");
        assertThatThrownBy(() -> kafka("--entry", "broker-a:0:17")).isInstanceOf(CliException.class)
                .hasMessageContaining("<partition>:<offset>");
        assertThatThrownBy(() -> kafka("--entry", "0:-1")).isInstanceOf(CliException.class);
        assertThatThrownBy(() -> kafka("--entry", "0:99999999999999999999")).isInstanceOf(CliException.class)
                .hasMessageContaining("too large");
        assertThatThrownBy(() -> rocketMq("--entry", "0:17")).isInstanceOf(CliException.class)
                .hasMessage("a RocketMQ entry is <broker>:<queue>:<offset>, e.g. broker-a:0:17, not '0:17'");
        assertThatThrownBy(() -> rocketMq("--entry", ":0:17")).isInstanceOf(CliException.class);
    }

    @Test
    void entriesSelectThosePositionsOnly() {
        LetterFilter filter = kafka("--entry", "0:1,0:3");

        assertThat(filter.matches(letter("0:1", "a", null, null))).isTrue();
        assertThat(filter.matches(letter("0:3", "b", null, null))).isTrue();
        assertThat(filter.matches(letter("0:2", "a", null, null))).isFalse();
        assertThat(filter.matches(letter("1:1", "a", null, null))).isFalse();
    }

    @Test
    void keysAreCommaSeparatedAndMatchedExactly() {
        LetterFilter filter = kafka("--key", "order-41,order-42");

        assertThat(filter.keys()).containsExactlyInAnyOrder("order-41", "order-42");
        assertThat(filter.matches(letter("0:0", "order-41", null, null))).isTrue();
        assertThat(filter.matches(letter("0:1", "order-4", null, null))).isFalse();
        assertThat(filter.matches(letter("0:2", "ORDER-41", null, null))).isFalse();
    }

    @Test
    void everyConditionGivenMustHold() {
        LetterFilter filter = kafka("--key", "order-41", "--exception", "IllegalStateException", "--group", "inventory",
                "--original-topic", "orders");

        assertThat(filter.matches(letter("0:0", "order-41", "java.lang.IllegalStateException", null))).isTrue();
        assertThat(filter.matches(letter("0:1", "order-41", "java.lang.IllegalArgumentException", null))).isFalse();
        assertThat(filter.matches(letter("0:2", "order-42", "java.lang.IllegalStateException", null))).isFalse();
    }

    @Test
    void anExceptionIsMatchedByItsFullOrSimpleNameButNotByASuffix() {
        Letter nested = letter("0:0", "k", "com.shop.Stock$OutOfStock", null);
        Letter plain = letter("0:1", "k", "java.lang.IllegalStateException", null);

        assertThat(kafka("--exception", "OutOfStock").matches(nested)).isTrue();
        assertThat(kafka("--exception", "com.shop.Stock$OutOfStock").matches(nested)).isTrue();
        assertThat(kafka("--exception", "java.lang.IllegalStateException").matches(plain)).isTrue();
        assertThat(kafka("--exception", "StateException").matches(plain)).isFalse();
    }

    @Test
    void fromAndToTakeInstantsLocalTimesDatesAndAges() {
        assertThat(kafka("--from", "2026-11-21T10:15:00Z").from()).isEqualTo("2026-11-21T10:15:00Z");
        assertThat(kafka("--from", "2026-11-21T10:15").from()).as("local: Berlin").isEqualTo("2026-11-21T09:15:00Z");
        assertThat(kafka("--from", "2026-11-21T10:15:30").from()).isEqualTo("2026-11-21T09:15:30Z");
        assertThat(kafka("--to", "2026-11-22").to()).as("midnight in Berlin").isEqualTo("2026-11-21T23:00:00Z");
        assertThat(kafka("--from", "90s").from()).isEqualTo("2026-11-22T02:58:30Z");
        assertThat(kafka("--from", "30m").from()).isEqualTo("2026-11-22T02:30:00Z");
        assertThat(kafka("--from", "2H").from()).isEqualTo("2026-11-22T01:00:00Z");
        assertThat(kafka("--from", "7d", "--to", "1d").to()).isEqualTo("2026-11-21T03:00:00Z");
    }

    @Test
    void aMalformedTimeIsAUsageErrorNamingTheForms() {
        for (String text : List.of("yesterday", "2026-13-01", "30", "2w", "2026-11-22 03:00")) {
            assertThatThrownBy(() -> kafka("--from", text)).as(text)
                    .isInstanceOf(CommandLine.ParameterException.class)
                    .hasMessageContaining("'" + text + "' is not a time")
                    .hasMessageContaining("30m, 2h, 7d");
        }
    }

    @Test
    void fromIsInclusiveToExclusiveAndALetterWithoutAFailureTimeIsLeftOut() {
        LetterFilter filter = kafka("--from", "2026-11-22T02:00:00Z", "--to", "2026-11-22T03:00:00Z");

        assertThat(filter.matches(letter("0:0", "k", null, "2026-11-22T02:00:00Z"))).isTrue();
        assertThat(filter.matches(letter("0:1", "k", null, "2026-11-22T02:59:59.999Z"))).isTrue();
        assertThat(filter.matches(letter("0:2", "k", null, "2026-11-22T03:00:00Z"))).isFalse();
        assertThat(filter.matches(letter("0:3", "k", null, "2026-11-22T01:59:59Z"))).isFalse();
        assertThat(filter.matches(letter("0:4", "k", null, null))).isFalse();
    }

    private static Letter letter(String entry, String key, String exception, String failedAt) {
        Map<String, String> idem = new LinkedHashMap<>();
        idem.put("idem-original-topic", "orders");
        idem.put("idem-consumer-group", "inventory");
        idem.put("idem-idempotency-key", key);
        if (exception != null) {
            idem.put("idem-exception-class", exception);
        }
        if (failedAt != null) {
            idem.put("idem-last-failure-at", failedAt);
        }
        return new Letter(entry, null, new byte[0], List.of(), idem, null, null, null);
    }

    /** A topic that only knows its broker's entry form (the filter needs nothing else). */
    private record EntryForm(UnaryOperator<String> form) implements DeadLetterTopic {
        @Override
        public String broker() {
            return "test";
        }

        @Override
        public Scan scan(String topic, LetterFilter filter) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Optional<Letter> read(String topic, String entry) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletableFuture<String> resend(Letter letter) {
            throw new UnsupportedOperationException();
        }

        @Override
        public String entry(String text) {
            return form.apply(text);
        }

        @Override
        public void close() {
        }
    }
}
