package dev.idem.benchmarks;

/**
 * One variant's figures.
 *
 * @param broker                kafka or rocketmq
 * @param variant               raw, idem, naive
 * @param messages              messages consumed
 * @param seconds               wall time from the first message to the last
 * @param roundTripsPerMessage  requests the variant sent to Redis, per message
 * @param commandsPerMessage    commands Redis executed (scripts' inner commands included), per message
 * @param p50Millis             median time a message spends between arrival and acknowledgement
 * @param p99Millis             99th percentile of the same
 */
record Result(String broker, String variant, int messages, double seconds, double roundTripsPerMessage,
              double commandsPerMessage, double p50Millis, double p99Millis) {

    double perSecond() {
        return messages / seconds;
    }
}
