/** Settings and start-up checks of the share consumer. Not public API. */
package dev.idem.kafka.share.internal;
