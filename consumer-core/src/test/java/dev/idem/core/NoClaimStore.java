package dev.idem.core;

import dev.idem.core.spi.CompensationOutcome;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimRequest;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.FailureCount;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The claim switched off: every claim is granted, nothing is remembered. Only for tests that must
 * show what happens without Idem's protection.
 */
public final class NoClaimStore implements ClaimStore {

    @Override
    public Duration doneWindow() {
        return Duration.ofDays(7);
    }

    @Override
    public Duration attemptsWindow() {
        return Duration.ofDays(1);
    }

    @Override
    public List<Claim> claim(List<ClaimRequest> requests, String owner, Duration lease) {
        return requests.stream().<Claim>map(r -> new Claim.Claimed(r.key(), 1, 1, 0, false, true, Optional.empty(),
                Optional.empty(), Optional.empty())).toList();
    }

    @Override
    public boolean count(IdempotencyKey key, String owner, Duration lease) {
        return true;
    }

    @Override
    public Set<IdempotencyKey> renew(Collection<IdempotencyKey> keys, String owner, Duration lease) {
        return Set.of();
    }

    @Override
    public Set<IdempotencyKey> complete(Collection<IdempotencyKey> keys, String owner) {
        return Set.of();
    }

    @Override
    public Optional<FailureCount> fail(IdempotencyKey key, String owner, String error) {
        return Optional.of(new FailureCount(1, 1, Instant.now()));
    }

    @Override
    public void release(Collection<IdempotencyKey> keys, Set<IdempotencyKey> crashed, String owner) {
    }

    @Override
    public boolean doom(IdempotencyKey key, String owner, String reason, String error) {
        return true;
    }

    @Override
    public boolean postpone(IdempotencyKey key, String owner, Duration delay) {
        return true;
    }

    @Override
    public boolean deadLetter(IdempotencyKey key, String owner, Duration compensationLease) {
        return true;
    }

    @Override
    public boolean deadLetter(IdempotencyKey key, String owner, Duration compensationLease, long fence) {
        return true;
    }

    @Override
    public boolean recordCompensation(IdempotencyKey key, String owner, CompensationOutcome outcome) {
        return true;
    }
}
