/**
 * What commands do to Redis, the effect ledger and brokers: connections opened on demand, replays
 * (reset a dead key, forget its ledger row, send, record), the replay records, pacing and progress.
 */
@NullMarked
package dev.idem.cli.ops;

import org.jspecify.annotations.NullMarked;
