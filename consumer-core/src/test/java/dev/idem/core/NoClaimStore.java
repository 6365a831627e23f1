package dev.idem.core;

import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimRecord;
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
    public List<Claim> claim(List<ClaimRequest> requests, String owner, Duration lease, boolean firm) {
        return requests.stream().<Claim>map(r -> new Claim.Claimed(r.key(), 1, 1, 0, false, true, Optional.empty()))
                .toList();
    }

    @Override
    public boolean start(IdempotencyKey key, String owner) {
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
    public void release(Collection<IdempotencyKey> keys, String owner) {
    }

    @Override
    public boolean deadLetter(IdempotencyKey key, String owner, String error) {
        return true;
    }

    @Override
    public void recordCompensation(IdempotencyKey key, String outcome) {
    }

    @Override
    public void reset(IdempotencyKey key) {
    }

    @Override
    public Optional<ClaimRecord> inspect(IdempotencyKey key) {
        return Optional.empty();
    }
}
