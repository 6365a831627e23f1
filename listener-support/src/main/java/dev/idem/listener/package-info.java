/**
 * The framework-neutral half of Idem's Spring Boot and Micronaut integrations, for integrations
 * rather than applications: a listener's {@link dev.idem.listener.ListenerSpec} (its identity, its
 * handler and the settings its annotation and properties set, each unset one keeping the builder's
 * default), and the one place that turns a spec into its processor
 * ({@link dev.idem.listener.ListenerProcessors}) and its consumer on each broker
 * ({@link dev.idem.listener.ListenerConsumers}). The frameworks keep what is theirs: reading
 * annotations and properties, bean lookups, transactions and health.
 */
@NullMarked
package dev.idem.listener;

import org.jspecify.annotations.NullMarked;
