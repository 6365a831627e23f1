package dev.idem.sample.inventory.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.sample.inventory.Order;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The demo's expectations hold whatever order the copies arrive in. */
class ScenarioTest {

    private final Scenario scenario = Scenario.generate(15, 150, true);

    @Test
    void validOrdersTogetherNeverExceedASkusStock() {
        assertThat(scenario.expectedStock().values()).allSatisfy(left -> assertThat(left).isNotNegative());
    }

    @Test
    void poisonOrdersAreRejectedWhateverArrivesFirst() {
        Map<String, Integer> seed = scenario.seedStock();
        for (Order order : scenario.orders()) {
            if (scenario.isPoison(order.orderId())) {
                assertThat(!seed.containsKey(order.sku()) || order.quantity() > seed.get(order.sku()))
                        .as(order + " is rejected even on the full seed stock").isTrue();
            }
        }
        assertThat(scenario.poison()).hasSize(6);
    }

    @Test
    void someOrdersFailOnceAndSomeGoThroughRocketMq() {
        assertThat(scenario.transientFailures()).isBetween(5L, 30L);
        assertThat(scenario.ordersOn("rocketmq", false)).isEqualTo(scenario.orders().size() / 3);
        assertThat(Scenario.generate(15, 150, false).ordersOn("rocketmq", false)).isZero();
    }
}
