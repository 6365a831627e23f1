package dev.idem.sample.inventory.demo;

import dev.idem.sample.inventory.Faults;
import dev.idem.sample.inventory.Order;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * The demo's traffic, decided up front from a seed so the expected stock is known: SKUs and their
 * seed stock, valid orders (together they never exceed a SKU's stock, so whatever the order of
 * arrival every valid order applies), and poison orders that are rejected whatever the order of
 * arrival (an unknown SKU, or more than the SKU's whole seed stock). Immutable.
 */
final class Scenario {

    /** Copies sent of every order, at once, to different partitions or queues. */
    static final int COPIES = 3;
    /** Percent of orders whose first attempt fails (after the deduction, so it rolls back). */
    static final int TRANSIENT_PERCENT = 10;
    static final String UNKNOWN_SKU = "SKU-404";
    private static final int SKUS = 5;
    private static final int SEED_STOCK = 500;
    private static final int MAX_QUANTITY = 4;

    private final Map<String, Integer> seedStock;
    private final List<Order> orders;
    private final Set<String> poison;
    private final Map<String, String> brokers;

    private Scenario(Map<String, Integer> seedStock, List<Order> orders, Set<String> poison, Map<String, String> brokers) {
        this.seedStock = seedStock;
        this.orders = orders;
        this.poison = poison;
        this.brokers = brokers;
    }

    /**
     * {@code count} valid orders and a few poison ones, in random order; with {@code rocketMq}, every
     * third order goes through RocketMQ instead of Kafka.
     */
    static Scenario generate(long seed, int count, boolean rocketMq) {
        Random random = new Random(seed);
        Map<String, Integer> stock = new LinkedHashMap<>();
        for (int i = 1; i <= SKUS; i++) {
            stock.put("SKU-" + i, SEED_STOCK);
        }
        List<String> skus = List.copyOf(stock.keySet());
        List<Order> orders = new ArrayList<>();
        for (int i = 1; i <= count; i++) {
            orders.add(new Order(String.format("order-%04d", i), skus.get(random.nextInt(SKUS)),
                    1 + random.nextInt(MAX_QUANTITY)));
        }
        // Poison: rejected whatever else arrives first.
        int poisonEach = Math.max(1, count / 50);
        Set<String> poison = new LinkedHashSet<>();
        for (int i = 1; i <= poisonEach; i++) {
            Order unknown = new Order(String.format("order-9%03d", i), UNKNOWN_SKU, 1);
            Order tooMany = new Order(String.format("order-8%03d", i), skus.get(random.nextInt(SKUS)), SEED_STOCK * 2);
            orders.add(unknown);
            orders.add(tooMany);
            poison.add(unknown.orderId());
            poison.add(tooMany.orderId());
        }
        Collections.shuffle(orders, random);
        Map<String, String> brokers = new LinkedHashMap<>();
        for (int i = 0; i < orders.size(); i++) {
            brokers.put(orders.get(i).orderId(), rocketMq && i % 3 == 2 ? "rocketmq" : "kafka");
        }
        return new Scenario(Collections.unmodifiableMap(stock), List.copyOf(orders), Collections.unmodifiableSet(poison),
                Collections.unmodifiableMap(brokers));
    }

    Map<String, Integer> seedStock() {
        return seedStock;
    }

    List<Order> orders() {
        return orders;
    }

    Set<String> poison() {
        return poison;
    }

    boolean isPoison(String orderId) {
        return poison.contains(orderId);
    }

    String broker(String orderId) {
        return brokers.get(orderId);
    }

    long ordersOn(String broker, boolean poisonOnly) {
        return orders.stream().filter(o -> brokers.get(o.orderId()).equals(broker))
                .filter(o -> !poisonOnly || poison.contains(o.orderId())).count();
    }

    int validOrders() {
        return orders.size() - poison.size();
    }

    /** Orders whose first attempt fails on purpose (valid ones: a poison order is rejected first). */
    long transientFailures() {
        return orders.stream().filter(o -> !isPoison(o.orderId()))
                .filter(o -> Faults.chosen(o.orderId(), TRANSIENT_PERCENT)).count();
    }

    /** Seed stock minus every valid order, by SKU. */
    Map<String, Integer> expectedStock() {
        Map<String, Integer> expected = new LinkedHashMap<>(seedStock);
        for (Order order : orders) {
            if (!isPoison(order.orderId())) {
                expected.merge(order.sku(), -order.quantity(), Integer::sum);
            }
        }
        return expected;
    }
}
