/**
 * The Redis claim store (Redisson, Lua scripts, times from Redis {@code TIME}), for single Redis
 * servers and Redis Cluster.
 */
@NullMarked
package dev.idem.redis;

import org.jspecify.annotations.NullMarked;
