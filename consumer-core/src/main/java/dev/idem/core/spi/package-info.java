/**
 * What users and adapters implement or choose: the claim store, the business dedup check, the
 * dead-letter publisher, compensation, backoff, the handler interceptor, payload codecs and key
 * sources. Each has stock implementations as static factories.
 */
package dev.idem.core.spi;
