package dev.idem.benchmarks;

/**
 * Latency of one variant at a steady rate: from just before the producer sends a message to the
 * end of its handler, in milliseconds.
 *
 * @param broker   kafka or rocketmq
 * @param variant  raw or idem
 * @param messages messages measured
 */
record Latency(String broker, String variant, int messages, double p50, double p99, double p999) {
}
