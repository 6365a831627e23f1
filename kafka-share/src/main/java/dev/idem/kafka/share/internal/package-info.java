/** Settings and start-up checks of the share consumer. Not public API. */
@NullMarked
package dev.idem.kafka.share.internal;

import org.jspecify.annotations.NullMarked;
