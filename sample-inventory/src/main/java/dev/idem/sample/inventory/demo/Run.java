package dev.idem.sample.inventory.demo;

import dev.idem.sample.inventory.Order;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One run of the scenario, on instances A and B already consuming: sends the orders over a few
 * seconds, kills B with SIGKILL when 40% of the copies are sent and starts it again a second
 * later, prints progress every second, and returns once the run has settled: every expected row is
 * there, the Kafka group has committed everything, and nothing changed for a few seconds (or the
 * settle timeout passed; the report then judges what is there). Not thread-safe; used once.
 */
final class Run {

    // Orders are sent over about this long, so the kill lands while instances are busy.
    private static final Duration SENDING = Duration.ofSeconds(8);
    private static final Duration RESTART_AFTER = Duration.ofSeconds(1);
    // Late copies and redeliveries (a 1 s backoff, a 5 s lease, a 6 s Kafka session) arrive within
    // this of the last change; a doubled effect among them would show in the report.
    private static final Duration QUIET = Duration.ofSeconds(3);
    private static final Duration SETTLE_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration TICK = Duration.ofMillis(250);

    private final Scenario scenario;
    private final Instances instances;
    private final Traffic traffic;
    private final Observations observed;
    private final long t0;
    private final PrintStream out;

    Run(Scenario scenario, Instances instances, Traffic traffic, Observations observed, long t0, PrintStream out) {
        this.scenario = scenario;
        this.instances = instances;
        this.traffic = traffic;
        this.observed = observed;
        this.t0 = t0;
        this.out = out;
    }

    /** Plays the run to its end; returns the number of kills. */
    int play() throws Exception {
        CompletableFuture<Void> sending = CompletableFuture.runAsync(this::send);
        long total = (long) scenario.orders().size() * Scenario.COPIES;
        long killedAt = 0;
        boolean restarted = false;
        boolean back = false;
        int kills = 0;
        long lastPrint = 0;
        long settleDeadline = 0;
        long quietSince = 0;
        Observations.Counts last = null;
        while (true) {
            TimeUnit.MILLISECONDS.sleep(TICK.toMillis());
            long now = System.nanoTime();
            if (killedAt == 0 && traffic.sent() >= total * 2 / 5) {
                long pid = instances.kill("B");
                killedAt = now;
                kills++;
                print("kill -9 instance B (pid %d), mid-run: what it was doing is cut off", pid);
            }
            if (killedAt != 0 && !restarted && now - killedAt >= RESTART_AFTER.toNanos()) {
                print("starting instance B again (pid %d)", instances.start("B"));
                restarted = true;
            }
            if (restarted && !back && instances.stats("B") != null) {
                back = true;
                print("instance B is back");
            }
            Observations.Counts counts = observed.counts();
            if (now - lastPrint >= TimeUnit.SECONDS.toNanos(1)) {
                lastPrint = now;
                print("sent %d/%d  deducted %d (valid orders %d)  dead letters %d/%d  refunds %d/%d  lag %d",
                        traffic.sent(), total, counts.deductions(), scenario.validOrders(), counts.deadLetters(),
                        scenario.poison().size(), counts.refunds(), scenario.poison().size(), counts.lag());
            }
            if (!sending.isDone() || !back) {
                continue;
            }
            sending.join();
            if (settleDeadline == 0) {
                settleDeadline = now + SETTLE_TIMEOUT.toNanos();
            }
            boolean complete = counts.deductions() >= scenario.validOrders() && counts.refunds() >= scenario.poison().size()
                    && counts.deadLetters() >= scenario.poison().size() && counts.lag() == 0;
            if (!counts.equals(last)) {
                last = counts;
                quietSince = now;
            }
            if (complete && now - quietSince >= QUIET.toNanos()) {
                print("settled");
                return kills;
            }
            if (now > settleDeadline) {
                print("not settled after %d s; judging what is there", SETTLE_TIMEOUT.toSeconds());
                return kills;
            }
        }
    }

    private void send() {
        List<Order> orders = scenario.orders();
        long pause = SENDING.toMillis() / orders.size();
        try {
            for (int i = 0; i < orders.size(); i++) {
                Order order = orders.get(i);
                traffic.send(order, scenario.broker(order.orderId()), i);
                TimeUnit.MILLISECONDS.sleep(pause);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("sending interrupted", e);
        } catch (Exception e) {
            throw new IllegalStateException("sending failed", e);
        }
    }

    private void print(String format, Object... args) {
        out.printf("%5.1fs  " + format + "%n", prepend(Demo.seconds(t0), args));
    }

    private static Object[] prepend(Object first, Object[] rest) {
        Object[] all = new Object[rest.length + 1];
        all[0] = first;
        System.arraycopy(rest, 0, all, 1, rest.length);
        return all;
    }
}
