/**
 * What claim-store and adapter authors implement: the claim store and its records
 * ({@link dev.idem.core.spi.ClaimStore}, {@link dev.idem.core.spi.Claim}) and the dead-letter
 * publisher each broker adapter provides. Application code rarely needs this package.
 */
package dev.idem.core.spi;
