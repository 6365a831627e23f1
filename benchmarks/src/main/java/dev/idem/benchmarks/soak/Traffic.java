package dev.idem.benchmarks.soak;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The soak's producer: a steady stream of ids, each sent two or three times to different
 * partitions (queues), some copies at once and some up to three seconds late, so copies of one id
 * run at the same time on different consumers, or after the first has finished. About 5% of ids are
 * poison and 10% transient. Kinds, copies and delays come from the seeded random.
 */
final class Traffic {

    private static final Logger LOG = LoggerFactory.getLogger(Traffic.class);
    private static final double POISON_SHARE = 0.05;
    private static final double TRANSIENT_SHARE = 0.10;
    // Late copies arrive up to this long after the first: after the first copy has finished, or
    // while it waits for its backoff.
    private static final int MAX_LATE_MILLIS = 3_000;

    private final SoakBroker broker;
    private final String topic;
    private final int partitions;
    private final double idsPerSecond;
    private final Random random;
    // Sends wait for the broker: a few threads keep the pace while late copies pile up.
    private final ScheduledThreadPoolExecutor senders = new ScheduledThreadPoolExecutor(4);
    private final Map<String, Integer> sent = new ConcurrentHashMap<>();
    private final AtomicLong failures = new AtomicLong();
    private volatile boolean stopping;
    private Thread generator;

    Traffic(SoakBroker broker, String topic, int partitions, double idsPerSecond, Random random) {
        this.broker = broker;
        this.topic = topic;
        this.partitions = partitions;
        this.idsPerSecond = idsPerSecond;
        this.random = random;
    }

    void start() {
        generator = new Thread(this::generate, "soak-traffic");
        generator.start();
    }

    private void generate() {
        List<Integer> all = IntStream.range(0, partitions).boxed().toList();
        long started = System.nanoTime();
        for (long n = 0; !stopping; n++) {
            long due = started + (long) (n * 1e9 / idsPerSecond);
            long wait = due - System.nanoTime();
            if (wait > 0) {
                try {
                    TimeUnit.NANOSECONDS.sleep(wait);
                } catch (InterruptedException e) {
                    return;
                }
            }
            double draw = random.nextDouble();
            Kind kind = draw < POISON_SHARE ? Kind.POISON : draw < POISON_SHARE + TRANSIENT_SHARE ? Kind.TRANSIENT : Kind.GOOD;
            String id = kind.id(n);
            int copies = 2 + random.nextInt(2);
            // Distinct partitions at random, so copies land on different consumers whatever the assignor.
            List<Integer> spread = new ArrayList<>(all);
            for (int copy = 0; copy < copies; copy++) {
                int partition = spread.remove(random.nextInt(spread.size()));
                long delay = copy == 0 || random.nextBoolean() ? 0 : 100 + random.nextInt(MAX_LATE_MILLIS - 100);
                senders.schedule(() -> send(id, partition), delay, TimeUnit.MILLISECONDS);
            }
        }
    }

    private void send(String id, int partition) {
        try {
            broker.send(topic, id, partition);
            sent.merge(id, 1, Integer::sum);
        } catch (Exception e) {
            failures.incrementAndGet();
            LOG.warn("could not send {} to partition {}", id, partition, e);
        }
    }

    /** Stops making ids and waits until every copy already planned, late ones included, is sent. */
    void stop() throws InterruptedException {
        stopping = true;
        generator.join();
        senders.shutdown();
        if (!senders.awaitTermination(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("copies still being sent after 60 s");
        }
    }

    /** Copies acknowledged by the broker, per id; an id none of whose copies was acknowledged is absent. */
    Map<String, Integer> sent() {
        return Map.copyOf(sent);
    }

    long failures() {
        return failures.get();
    }
}
