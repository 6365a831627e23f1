/**
 * The outbox: messages a handler (or any transactional code) sends are rows written in its own
 * transaction, committed with its effect or not at all, and published after the commit by a relay,
 * each with an id that is the same on every re-run, so a downstream consumer applies it once.
 * {@link dev.idem.core.outbox.JdbcOutbox} is the table, {@link dev.idem.core.outbox.OutboxRelay}
 * the embedded publisher, {@link dev.idem.core.outbox.OutboxPublisher} what a broker adapter
 * implements.
 */
@NullMarked
package dev.idem.core.outbox;

import org.jspecify.annotations.NullMarked;
