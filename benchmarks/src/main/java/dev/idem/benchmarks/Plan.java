package dev.idem.benchmarks;

import java.time.Duration;

/**
 * How long and how much the benchmarks run. A variant consumes its topic from the beginning until
 * it has every message or has run for {@link #limit()}, whichever comes first; rounds interleave
 * the variants (raw, idem, naive, raw, ...) after one warm-up round that is not reported. A full run
 * makes two passes over the throughput parts, minutes apart, so that every ratio is measured twice in
 * whatever phase the machine is in then (see {@link Calibration}).
 *
 * @param quick            a short run for development ({@code --quick}); not for the results file
 * @param only             {@code kafka}, {@code rocketmq}, {@code share}, {@code pg}, {@code speeds} (handlers of
 *                         several speeds), {@code memory} or {@code core} (Idem without a broker) to run one
 *                         part only ({@code --only=kafka},
 *                         development), or null for all
 * @param kafkaMessages    records on the Kafka topic
 * @param rocketMqMessages messages on the RocketMQ topic
 * @param shareMessages    records on the topic the Kafka share groups read
 * @param pgOrders         orders on each topic of the PostgreSQL table (sent once, or three times)
 * @param limit            longest a variant runs in a measured round
 * @param warmUp           longest a variant runs in the warm-up round
 * @param rounds           measured rounds per pass
 * @param passes           passes over the throughput parts ({@code --passes=N})
 * @param steady           how long each steady-rate latency run sends
 * @param steadyRate       messages per second of the latency runs
 */
record Plan(boolean quick, String only, int kafkaMessages, int rocketMqMessages, int shareMessages, int pgOrders,
            Duration limit,
            Duration warmUp, int rounds, Duration steady, int steadyRate, int passes) {

    // The PostgreSQL table: the slowest variant (about 4,000 msg/s on 2 cores) takes 5 s for the topic
    // of 20,000 orders and reaches the 10 s limit on the one of 60,000 copies; with warm-ups stopping at
    // their limit and every variant's setup, the table adds about three minutes to a full run.
    private static final int PG_ORDERS = 20_000;

    static Plan full() {
        return new Plan(false, null, 1_000_000, 1_000_000, 1_000_000, PG_ORDERS, Duration.ofSeconds(10), Duration.ofSeconds(3), 2,
                Duration.ofSeconds(10), 1_000, 2);
    }

    static Plan quickRun() {
        return new Plan(true, null, 100_000, 50_000, 50_000, 5_000, Duration.ofSeconds(2), Duration.ofSeconds(1), 1,
                Duration.ofSeconds(3), 1_000, 1);
    }

    /**
     * From the command line: nothing for the full run, {@code --quick}, {@code --only=kafka|rocketmq|share|pg|remote|outbox},
     * {@code --only=memory} (Redis memory per done key alone) or {@code --only=core} (Idem without a
     * broker), and {@code --passes=N}.
     */
    static Plan of(String[] args) {
        Plan plan = full();
        for (String arg : String.join(" ", args).trim().split("\\s+")) {
            if (arg.isEmpty()) {
                continue;
            }
            if (arg.equals("--quick")) {
                Plan quick = quickRun();
                plan = new Plan(true, plan.only(), quick.kafkaMessages(), quick.rocketMqMessages(),
                        quick.shareMessages(), quick.pgOrders(),
                        quick.limit(), quick.warmUp(), quick.rounds(), quick.steady(), quick.steadyRate(), quick.passes());
            } else if (arg.equals("--only=kafka") || arg.equals("--only=rocketmq") || arg.equals("--only=share")
                    || arg.equals("--only=pg") || arg.equals("--only=memory") || arg.equals("--only=remote")
                    || arg.equals("--only=outbox") || arg.equals("--only=speeds") || arg.equals("--only=core")) {
                plan = new Plan(plan.quick(), arg.substring("--only=".length()), plan.kafkaMessages(),
                        plan.rocketMqMessages(), plan.shareMessages(), plan.pgOrders(), plan.limit(), plan.warmUp(), plan.rounds(),
                        plan.steady(), plan.steadyRate(), plan.passes());
            } else if (arg.matches("--passes=[1-9]")) {
                plan = new Plan(plan.quick(), plan.only(), plan.kafkaMessages(), plan.rocketMqMessages(),
                        plan.shareMessages(), plan.pgOrders(), plan.limit(), plan.warmUp(), plan.rounds(), plan.steady(),
                        plan.steadyRate(), Integer.parseInt(arg.substring("--passes=".length())));
            } else {
                throw new IllegalArgumentException("bench.args: unknown argument '" + arg
                        + "'; expected --quick, --passes=1-9 or --only=kafka|rocketmq|share|pg|memory|remote|outbox|speeds|core");
            }
        }
        return plan;
    }

    /** Whether this run includes {@code part}: kafka, rocketmq, share, pg or remote (Kafka with Redis behind a delay). */
    boolean runs(String part) {
        return only == null || only.equals(part);
    }
}
