package dev.idem.benchmarks;

/**
 * One variant's figures in one round.
 *
 * @param broker                kafka, rocketmq, or for the PostgreSQL table pg (every message once) and pg-x3
 *                              (three times)
 * @param variant               raw, idem, naive
 * @param round                 1, 2, ... (the warm-up round is not kept)
 * @param messages              messages consumed
 * @param seconds               wall time from the first message to the last one counted
 * @param roundTripsPerMessage  requests the variant sent to Redis, per message
 * @param commandsPerMessage    commands Redis executed (scripts' inner commands included), per message
 * @param database              what the PostgreSQL table adds; null for the broker benchmarks
 * @param jvmCpuMicros          CPU time of this JVM (consumer, and the in-process brokers) per message, µs
 * @param redisCpuMicros        CPU time of redis-server per message, µs; NaN when Redis is not on this machine
 * @param pass                  the run's pass over the throughput parts, 1, 2, ...
 */
record Result(String broker, String variant, int round, long messages, double seconds, double roundTripsPerMessage,
              double commandsPerMessage, Database database, double jvmCpuMicros, double redisCpuMicros, int pass) {

    /** The same figures, of pass {@code n}. */
    Result inPass(int n) {
        return new Result(broker, variant, round, messages, seconds, roundTripsPerMessage, commandsPerMessage, database,
                jvmCpuMicros, redisCpuMicros, n);
    }

    /**
     * The PostgreSQL figures of one run.
     *
     * @param transactionsPerMessage transactions the database counted (xact_commit + xact_rollback of
     *                               pg_stat_database), per message consumed
     * @param stock                  units left over all SKUs at the end
     * @param expectedStock          units that must be left when every order was applied once
     * @param wrongSkus              SKUs whose stock is not what it must be
     */
    record Database(double transactionsPerMessage, long stock, long expectedStock, int wrongSkus) {

        boolean stockRight() {
            return wrongSkus == 0 && stock == expectedStock;
        }
    }

    double perSecond() {
        return messages / seconds;
    }
}
