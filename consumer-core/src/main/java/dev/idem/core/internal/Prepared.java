package dev.idem.core.internal;

import dev.idem.core.Envelope;
import dev.idem.core.IdempotencyKey;
import org.jspecify.annotations.Nullable;

/**
 * A message after key extraction and decoding, before its claim.
 *
 * @param envelope    the message as delivered
 * @param key         its idempotency key (the message id when it has none)
 * @param payload     the decoded payload, null when {@code defect} is set
 * @param defect      why the message can never be processed (undecodable, no key), or null
 * @param defectCause the error behind the defect, or null
 * @param <T>         payload type
 */
public record Prepared<T>(Envelope envelope, IdempotencyKey key, @Nullable T payload, @Nullable String defect,
                          @Nullable Throwable defectCause) {
}
