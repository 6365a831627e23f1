/**
 * What both Idem Kafka consumers share and users do not call: the consumer's lifecycle and the
 * checked settings of its builder, settings read from the Kafka configuration, the mapping between records
 * and envelopes, failure classification and the composed processor. Not public API.
 */
@NullMarked
package dev.idem.kafka.internal;

import org.jspecify.annotations.NullMarked;
