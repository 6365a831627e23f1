package dev.idem.rocketmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.junit.jupiter.api.Test;

class IdemRocketMqSettingsTest {

    @Test
    void aConsumerThatWouldDeadLetterBeforeIdemIsRefusedNamingTheSetting() {
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("inventory");
        consumer.setMaxReconsumeTimes(3);

        assertThatThrownBy(() -> IdemRocketMq.checkReconsumeTimes(consumer, false, 5))
                .hasMessageStartingWith("maxReconsumeTimes of consumer group inventory must exceed Idem's maxAttempts (5)"
                        + " but was 3");
    }

    @Test
    void theDefaultReconsumeTimesLeaveIdemInCharge() {
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("inventory");

        IdemRocketMq.checkReconsumeTimes(consumer, false, 5);
        IdemRocketMq.checkReconsumeTimes(consumer, true, 5);
    }

    @Test
    void backoffsMapOntoTheShortestDelayLevelThatCoversThem() {
        DelayLevels levels = DelayLevels.defaults();

        assertThat(levels.levelFor(Duration.ZERO)).isEqualTo(1);
        assertThat(levels.levelFor(Duration.ofSeconds(1))).isEqualTo(1);
        assertThat(levels.levelFor(Duration.ofSeconds(2))).isEqualTo(2);
        assertThat(levels.levelFor(Duration.ofSeconds(45))).isEqualTo(5);
        assertThat(levels.levelFor(Duration.ofDays(1))).isEqualTo(18);
        assertThatThrownBy(() -> DelayLevels.parse("1s 5x")).hasMessageContaining("'5x'");
    }
}
