package dev.idem.benchmarks;

/**
 * One variant's figures in one round.
 *
 * @param broker                kafka or rocketmq
 * @param variant               raw, idem, naive
 * @param round                 1, 2, ... (the warm-up round is not kept)
 * @param messages              messages consumed
 * @param seconds               wall time from the first message to the last one counted
 * @param roundTripsPerMessage  requests the variant sent to Redis, per message
 * @param commandsPerMessage    commands Redis executed (scripts' inner commands included), per message
 */
record Result(String broker, String variant, int round, long messages, double seconds, double roundTripsPerMessage,
              double commandsPerMessage) {

    double perSecond() {
        return messages / seconds;
    }
}
