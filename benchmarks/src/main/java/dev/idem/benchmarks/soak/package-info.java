/**
 * The soak: three consumer processes of one group on a real broker, a PostgreSQL ledger and a Redis
 * of the soak's own, under continuous duplicated traffic with poison and transient messages, while
 * consumers are killed with SIGKILL, paused with SIGSTOP beyond their lease, and Redis is killed
 * and restarted empty. At the end it counts lost and doubled effects, dead letters and
 * compensations. {@link dev.idem.benchmarks.soak.Soak} runs it; {@link dev.idem.benchmarks.soak.SoakConsumer}
 * is one consumer process. Run with {@code -Psoak} (see docs/guide/performance.md, "Soak").
 */
package dev.idem.benchmarks.soak;
