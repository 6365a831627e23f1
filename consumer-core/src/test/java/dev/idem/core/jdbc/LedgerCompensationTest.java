package dev.idem.core.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.Compensation;
import dev.idem.core.DeadLetter;
import dev.idem.core.Delivery;
import dev.idem.core.Envelope;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.Outcome;
import dev.idem.core.PayloadCodec;
import dev.idem.core.memory.InMemoryClaimStore;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The ledger's transactional compensation (H2): the undo commits with the record that it ran, so a
 * second run of the hook (a copy, a takeover after a crash) writes nothing, and a failed hook leaves
 * nothing but a compensation still to run.
 */
class LedgerCompensationTest {

    private Connection keepAlive;
    private JdbcEffectLedger ledger;
    private final AtomicInteger calls = new AtomicInteger();
    private final Delivery<String> delivery = LedgerFixture.delivery("inventory", "order-1", 7);
    private final DeadLetter letter = new DeadLetter(delivery.key(), 7, delivery.envelope(), 5, "attempts exhausted",
            "", "", "", Instant.now(), Instant.now());

    @BeforeEach
    void ledger() throws Exception {
        String url = "jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
        keepAlive = DriverManager.getConnection(url);
        LedgerFixture.createTables(keepAlive, "h2");
        ledger = JdbcEffectLedger.builder(LedgerFixture.dataSource(url, "", "")).build();
    }

    @AfterEach
    void close() throws SQLException {
        keepAlive.close();
    }

    /** The undo: a stock return, one movement row of +1. */
    private Compensation returnStock(boolean fail) {
        return ledger.compensation((deadLetter, tx) -> {
            calls.incrementAndGet();
            LedgerFixture.<String>insertMovement().handle(delivery, tx);
            if (fail) {
                throw new IllegalStateException("the hook failed after its write");
            }
        });
    }

    @Test
    void theUndoCommitsWithItsRecordAndASecondRunWritesNothing() throws Exception {
        ledger.deadLettered(letter);

        returnStock(false).compensate(letter);
        returnStock(false).compensate(letter);   // a takeover after a crash right after the commit

        assertThat(LedgerFixture.movements(keepAlive, "order-1")).as("stock returned").isEqualTo(1);
        assertThat(calls).as("hook calls").hasValue(1);
        assertThat(ledger.compensationPending(delivery)).isEmpty();
    }

    @Test
    void aFailedHookRollsBackItsWriteAndLeavesTheCompensationPending() throws Exception {
        ledger.deadLettered(letter);

        assertThatThrownBy(() -> returnStock(true).compensate(letter)).hasMessageContaining("failed after its write");

        assertThat(LedgerFixture.movements(keepAlive, "order-1")).isZero();
        assertThat(ledger.compensationPending(delivery)).isPresent();
        returnStock(false).compensate(letter);
        assertThat(LedgerFixture.movements(keepAlive, "order-1")).isEqualTo(1);
        assertThat(ledger.compensationPending(delivery)).isEmpty();
    }

    @Test
    void aDeadLetterTheLedgerCouldNotRecordIsCompensatedOnceAndRecordedThen() throws Exception {
        // (no dead row: the database was down when the key was dead-lettered)
        returnStock(false).compensate(letter);
        returnStock(false).compensate(letter);

        assertThat(LedgerFixture.movements(keepAlive, "order-1")).isEqualTo(1);
        assertThat(ledger.alreadyApplied(delivery)).as("the key is remembered as dead-lettered").isTrue();
        assertThat(ledger.compensationPending(delivery)).isEmpty();
    }

    /** A key dead-lettered again after a replay whose dead row was not forgotten: its own undo runs. */
    @Test
    void aLaterDeadLetteringOfTheKeyRunsItsOwnCompensation() throws Exception {
        ledger.deadLettered(letter);
        returnStock(false).compensate(letter);
        DeadLetter again = new DeadLetter(delivery.key(), 8, delivery.envelope(), 5, "attempts exhausted",
                "", "", "", Instant.now(), Instant.now());

        returnStock(false).compensate(again);
        returnStock(false).compensate(again);

        assertThat(LedgerFixture.movements(keepAlive, "order-1")).isEqualTo(2);
        assertThat(calls).hasValue(2);
    }

    @Test
    void aCompensationRecoveredAfterTheClaimStoreLostItsRecordKeepsItsId() throws Exception {
        // Given a key dead-lettered under fence 7 whose compensation never recorded an outcome, and a
        // claim store that lost its record (a Redis loss)
        ledger.deadLettered(letter);
        List<String> ids = new CopyOnWriteArrayList<>();
        try (IdempotentProcessor<String> processor = ledger.processor(LedgerFixture.<String>insertMovement())
                .group("inventory").claims(InMemoryClaimStore.create()).codec(PayloadCodec.utf8())
                .keys(KeySource.payload(p -> p)).compensation(deadLetter -> ids.add(deadLetter.compensationId()))
                .deadLetters(deadLetter -> {
                    throw new AssertionError("the letter is not published again: " + deadLetter);
                }).build()) {

            // When a copy of the message arrives
            Outcome outcome = processor.process(new Envelope("orders", 0, "1", "orders-0@1", 0, Map.of(),
                    "order-1".getBytes(StandardCharsets.UTF_8)));

            // Then the compensation runs once more under the dead-lettering's own id, for a hook to dedupe on
            assertThat(outcome).isInstanceOf(Outcome.DeadLettered.class);
        }
        assertThat(ids).containsExactly(letter.compensationId());
        assertThat(ledger.compensationPending(delivery)).isEmpty();
    }

    @Test
    void theCompensationIdNamesOneDeadLetteringOfTheKey() {
        DeadLetter takenOver = new DeadLetter(delivery.key(), 7, delivery.envelope(), 5, "attempts exhausted",
                "", "", "", Instant.now().plusSeconds(30), Instant.now().plusSeconds(30));
        DeadLetter afterAReplay = new DeadLetter(delivery.key(), 8, delivery.envelope(), 5, "attempts exhausted",
                "", "", "", Instant.now(), Instant.now());

        assertThat(takenOver.compensationId()).isEqualTo(letter.compensationId()).hasSize(32);
        assertThat(afterAReplay.compensationId()).isNotEqualTo(letter.compensationId());
        assertThat(letter.idemHeaders()).containsEntry("idem-compensation-id", letter.compensationId());
    }
}
