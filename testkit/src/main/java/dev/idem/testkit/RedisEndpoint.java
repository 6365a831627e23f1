package dev.idem.testkit;

import java.net.URI;

/**
 * Where the tests' Redis listens.
 *
 * @param uri a {@code redis://[user:password@]host:port} URI, the form Redisson and most clients take
 */
public record RedisEndpoint(URI uri) {

    /** An endpoint without credentials. */
    public static RedisEndpoint of(String host, int port) {
        return new RedisEndpoint(URI.create("redis://" + host + ":" + port));
    }

    /** Host name or address. */
    public String host() {
        return uri.getHost();
    }

    /** TCP port, 6379 when the URI names none. */
    public int port() {
        return uri.getPort() < 0 ? 6379 : uri.getPort();
    }

    @Override
    public String toString() {
        // Never print credentials.
        return "RedisEndpoint[" + host() + ":" + port() + "]";
    }
}
