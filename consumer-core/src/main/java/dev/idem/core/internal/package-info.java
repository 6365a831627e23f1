/**
 * The processor's moving parts: the fixed processing order, lease renewal, failure
 * classification, metrics and codecs. Not public API.
 */
package dev.idem.core.internal;
