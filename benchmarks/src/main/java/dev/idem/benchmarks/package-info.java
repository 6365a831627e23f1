/**
 * The benchmark harness: Idem against the raw consumer and a naive per-message SETNX/SET wrapper,
 * on the test kit's real brokers and Redis, in one run. Not a library: it prints its report.
 */
package dev.idem.benchmarks;
