package dev.idem.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TimeZone;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class CommandLineTest {

    @Test
    void everyCommandHasHelpAndTheTopCommandListsThem(@TempDir Path home) {
        Operator operator = new Operator(Map.of(), home);
        Operator.Run help = operator.idem("--help");
        assertThat(help.code()).isZero();
        assertThat(help.out()).contains("dlq", "claims", "compensations", "generate-completion", "Exit codes");
        for (List<String> command : List.of(List.of("dlq"), List.of("dlq", "list"), List.of("dlq", "show"),
                List.of("dlq", "replay"), List.of("dlq", "purge"), List.of("claims"), List.of("claims", "show"),
                List.of("claims", "reset"), List.of("compensations"), List.of("compensations", "pending"))) {
            List<String> args = new ArrayList<>(command);
            args.add("--help");
            Operator.Run run = operator.idem(args.toArray(String[]::new));
            assertThat(run.code()).as(command.toString()).isZero();
            assertThat(run.out()).as(command.toString()).startsWith("Usage: idem " + String.join(" ", command));
        }
    }

    @Test
    void aMissingCommandIsAUsageError(@TempDir Path home) {
        Operator.Run run = new Operator(Map.of(), home).idem("dlq");
        assertThat(run.code()).isEqualTo(Idem.ERROR);
        assertThat(run.err()).contains("a command is missing: list, show, replay or purge");
    }

    @Test
    void completionIsGeneratedForEveryCommand(@TempDir Path home) {
        Operator.Run run = new Operator(Map.of(), home).idem("generate-completion");
        assertThat(run.code()).isZero();
        assertThat(run.out()).contains("complete -F _complete_idem", "replay", "--broker");
        assertThat(run.out()).as("the values an operator types").contains("(\"kafka\" \"rocketmq\")",
                "(\"table\" \"json\")").doesNotContain("\"KAFKA\"", "\"JSON\"");
    }

    @Test
    void helpNamesTheBrokersAsTypedAndKeepsTheProfileExampleOnOneLine(@TempDir Path home) {
        Operator operator = new Operator(Map.of(), home);

        assertThat(operator.idem("dlq", "list", "--help").out()).contains("kafka, rocketmq").doesNotContain("KAFKA, ROCKETMQ");
        assertThat(operator.idem("compensations", "pending", "--help").out()).contains("kafka, rocketmq");
        assertThat(operator.idem("--help").out()).contains("default.redis-url=redis://127.0.0.1:6379");
    }

    @Test
    void timesAreReadAsInstantsLocalTimesDatesOrAges() {
        Clock clock = Clock.fixed(Instant.parse("2026-11-22T03:00:00Z"), ZoneOffset.UTC);
        assertThat(Idem.time("2026-11-21T10:15:00Z", clock)).isEqualTo(Instant.parse("2026-11-21T10:15:00Z"));
        assertThat(Idem.time("2026-11-21T10:15", clock)).isEqualTo(Instant.parse("2026-11-21T10:15:00Z"));
        assertThat(Idem.time("2026-11-21", clock)).isEqualTo(Instant.parse("2026-11-21T00:00:00Z"));
        assertThat(Idem.time("90s", clock)).isEqualTo(Instant.parse("2026-11-22T02:58:30Z"));
        assertThat(Idem.time("2h", clock)).isEqualTo(Instant.parse("2026-11-22T01:00:00Z"));
        assertThat(Idem.time("7d", clock)).isEqualTo(Instant.parse("2026-11-15T03:00:00Z"));
        assertThatThrownBy(() -> Idem.time("last tuesday", clock))
                .isInstanceOf(CommandLine.TypeConversionException.class).hasMessageContaining("is not a time");
    }

    @Test
    void theOperatorsTimesWithoutAZoneAreReadInThisMachinesZone() {
        TimeZone before = TimeZone.getDefault();
        try {
            TimeZone.setDefault(TimeZone.getTimeZone("Asia/Tokyo"));
            Clock clock = Environment.system().clock();

            assertThat(clock.getZone()).isEqualTo(ZoneId.of("Asia/Tokyo"));
            assertThat(Idem.time("2026-11-22T03:00", clock)).isEqualTo(Instant.parse("2026-11-21T18:00:00Z"));
        } finally {
            TimeZone.setDefault(before);
        }
    }
}
