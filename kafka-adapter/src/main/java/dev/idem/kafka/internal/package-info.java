/** Mapping between Kafka records and Idem's envelopes. Not public API. */
package dev.idem.kafka.internal;
