package dev.idem.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class TestNamesTest {

    @Test
    void twoTestsWithTheSameNameGetDifferentNames() {
        TestNames first = TestNames.forTest("duplicateStorm");
        TestNames second = TestNames.forTest("duplicateStorm");

        assertThat(first.topic()).isNotEqualTo(second.topic());
        assertThat(first.group()).isNotEqualTo(second.group());
        assertThat(first.keyPrefix()).isNotEqualTo(second.keyPrefix());
    }

    @Test
    void namesUseOnlyCharactersEveryBrokerAccepts() {
        TestNames names = TestNames.forTest("Weird name: with spaces/and.dots_and%percent".repeat(5));

        // Kafka: [a-zA-Z0-9._-], RocketMQ: no '.', at most 127 characters.
        assertThat(names.topic("dlq")).matches("[a-z0-9-]+").hasSizeLessThan(100);
        assertThat(names.group("second")).matches("[a-z0-9-]+").hasSizeLessThan(100);
        assertThat(names.keyPrefix()).startsWith("idem-test:").endsWith(":");
    }

    @Test
    void blankTestNameIsRejectedNamingTheArgument() {
        assertThatThrownBy(() -> TestNames.forTest(" "))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("testName");
    }
}
