/**
 * What claim-store and adapter authors implement: the claim store, what it is asked and answers
 * ({@link dev.idem.core.spi.ClaimStore}, {@link dev.idem.core.spi.ClaimRequest},
 * {@link dev.idem.core.spi.Claim}, failure counts), the operator's side of it and the records it
 * shows ({@link dev.idem.core.spi.ClaimAdmin}, {@link dev.idem.core.spi.ClaimRecord}, compensation
 * outcomes), and the dead-letter publisher each broker adapter provides. Application code rarely
 * needs this package. Nothing here is null unless marked {@code @Nullable}.
 */
@NullMarked
package dev.idem.core.spi;

import org.jspecify.annotations.NullMarked;
