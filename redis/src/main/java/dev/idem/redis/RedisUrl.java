package dev.idem.redis;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.redisson.config.BaseConfig;
import org.redisson.config.ClusterServersConfig;
import org.redisson.config.Config;
import org.redisson.config.ReadMode;
import org.redisson.config.SentinelServersConfig;
import org.redisson.config.SingleServerConfig;

/**
 * A Redis URL, naming one server, a primary under Sentinel or a Cluster, and the Redisson
 * configuration it stands for. The forms are Lettuce's, with a cluster form beside them:
 * <pre>
 * redis://[[user]:password@]host[:6379][/database]
 * redis-sentinel://[[user]:password@]host[:26379][,host[:26379]...][/database]#primary-name
 * redis-cluster://[[user]:password@]host[:6379][,host[:6379]...]
 * </pre>
 * {@code rediss}, {@code rediss-sentinel} and {@code rediss-cluster} use TLS. The user and password
 * are the data nodes' (Sentinels that ask for a password get the same one, without the user; a
 * Sentinel ACL of its own needs a Redisson {@code Config} of your own); percent-encode {@code %},
 * {@code #}, {@code /}, {@code ,} and {@code ?} in them. Every read goes to the primary: Idem reads
 * what it just wrote, and no idle connections are kept to replicas.
 *
 * @param topology    which kind of deployment the URL names
 * @param nodes       the server, the Sentinels or the cluster's seed nodes, as {@code redis://host:port}
 *                    (or {@code rediss://})
 * @param user        the ACL user, or null
 * @param password    the password, or null
 * @param database    the database number (0 on a Cluster)
 * @param primaryName the name the Sentinels know the primary by; null unless Sentinel
 */
public record RedisUrl(Topology topology, List<String> nodes, @Nullable String user, @Nullable String password,
                       int database, @Nullable String primaryName) {

    /** The kinds of Redis deployment a URL can name. */
    public enum Topology { SINGLE, SENTINEL, CLUSTER }

    private static final String FORMS = "redis://host:6379, redis-sentinel://host:26379,host:26379#primary-name "
            + "or redis-cluster://host:6379,host:6379";

    public RedisUrl {
        nodes = List.copyOf(nodes);
    }

    /**
     * Parses {@code url}.
     *
     * @throws IllegalArgumentException saying what is wrong and which forms are accepted; the message
     *                                  never carries the URL's credentials
     */
    public static RedisUrl parse(String url) {
        if (url == null || url.isBlank()) {
            throw new IllegalArgumentException("the Redis URL is empty; expected " + FORMS);
        }
        int schemeEnd = url.indexOf("://");
        if (schemeEnd < 0) {
            throw invalid(url, "no scheme");
        }
        String scheme = url.substring(0, schemeEnd).toLowerCase(Locale.ROOT);
        boolean tls = scheme.startsWith("rediss");
        Topology topology = switch (scheme) {
            case "redis", "rediss" -> Topology.SINGLE;
            case "redis-sentinel", "rediss-sentinel" -> Topology.SENTINEL;
            case "redis-cluster", "rediss-cluster" -> Topology.CLUSTER;
            default -> throw invalid(url, "unknown scheme '" + scheme + "'");
        };
        String rest = url.substring(schemeEnd + 3);
        // The credentials end at the last '@': a password may hold '@', '#' or '/', a host never does.
        int at = rest.lastIndexOf('@');
        String userInfo = at < 0 ? null : rest.substring(0, at);
        rest = rest.substring(at + 1);
        if (rest.indexOf('?') >= 0) {
            throw invalid(url, "query parameters are not supported");
        }
        String primaryName = null;
        int hash = rest.indexOf('#');
        if (hash >= 0) {
            primaryName = decode(url, rest.substring(hash + 1));
            rest = rest.substring(0, hash);
        }
        int slash = rest.indexOf('/');
        int database = 0;
        if (slash >= 0) {
            String path = rest.substring(slash + 1);
            rest = rest.substring(0, slash);
            if (!path.isEmpty()) {
                try {
                    database = Integer.parseInt(path);
                } catch (NumberFormatException e) {
                    throw invalid(url, "the database '" + path + "' is not a number");
                }
                if (database < 0) {
                    throw invalid(url, "the database must be >= 0 but was " + database);
                }
            }
        }
        List<String> nodes = nodes(url, rest, tls, topology == Topology.SENTINEL ? 26379 : 6379);
        if (topology == Topology.SINGLE && nodes.size() > 1) {
            throw invalid(url, "more than one host for one server (use redis-sentinel:// or redis-cluster://)");
        }
        if (topology == Topology.SENTINEL && (primaryName == null || primaryName.isEmpty())) {
            throw invalid(url, "no primary name after '#'");
        }
        if (topology != Topology.SENTINEL && primaryName != null) {
            throw invalid(url, "a '#' name belongs to redis-sentinel:// only");
        }
        if (topology == Topology.CLUSTER && database != 0) {
            throw invalid(url, "a Cluster has database 0 only");
        }
        String user = null;
        String password = null;
        if (userInfo != null) {
            int colon = userInfo.indexOf(':');
            user = colon < 0 ? null : decode(url, userInfo.substring(0, colon));
            password = decode(url, colon < 0 ? userInfo : userInfo.substring(colon + 1));
            user = user == null || user.isEmpty() ? null : user;
            password = password.isEmpty() ? null : password;
        }
        return new RedisUrl(topology, nodes, user, password, database, primaryName);
    }

    /** {@code url} without its credentials, for messages and logs. */
    public static String redacted(String url) {
        if (url == null) {
            return "";
        }
        int at = url.lastIndexOf('@');
        if (at < 0) {
            return url;
        }
        int schemeEnd = url.indexOf("://");
        return schemeEnd >= 0 && schemeEnd < at ? url.substring(0, schemeEnd + 3) + url.substring(at + 1)
                : url.substring(at + 1);
    }

    /** The Redisson configuration this URL stands for, with Redisson's defaults otherwise. */
    public Config config() {
        return config(server -> { });
    }

    /**
     * The Redisson configuration this URL stands for, with {@code tuning} applied to its server
     * settings (a {@link SingleServerConfig}, {@link SentinelServersConfig} or
     * {@link ClusterServersConfig}), e.g. timeouts.
     */
    public Config config(Consumer<BaseConfig<?>> tuning) {
        Config config = new Config();
        BaseConfig<?> server = switch (topology) {
            case SINGLE -> config.useSingleServer().setAddress(nodes.get(0)).setDatabase(database);
            case SENTINEL -> {
                SentinelServersConfig sentinel = config.useSentinelServers().setMasterName(primaryName)
                        .setDatabase(database).setReadMode(ReadMode.MASTER).setSlaveConnectionMinimumIdleSize(0)
                        .setCheckSentinelsList(nodes.size() > 1);
                sentinel.setSentinelAddresses(nodes);
                yield sentinel;
            }
            case CLUSTER -> {
                ClusterServersConfig cluster = config.useClusterServers().setReadMode(ReadMode.MASTER)
                        .setSlaveConnectionMinimumIdleSize(0);
                cluster.setNodeAddresses(nodes);
                yield cluster;
            }
        };
        server.setUsername(user);
        server.setPassword(password);
        tuning.accept(server);
        return config;
    }

    @Override
    public String toString() {
        return "RedisUrl[" + topology + " " + nodes + (primaryName == null ? "" : " #" + primaryName)
                + (database == 0 ? "" : " db " + database) + (password == null ? "" : ", with a password") + "]";
    }

    private static List<String> nodes(String url, String hosts, boolean tls, int defaultPort) {
        if (hosts.isBlank()) {
            throw invalid(url, "no host");
        }
        List<String> nodes = new ArrayList<>();
        for (String part : hosts.split(",", -1)) {
            String host = part.strip();
            String name = host;
            int port = defaultPort;
            int colon = host.lastIndexOf(':');
            if (host.startsWith("[")) {
                int close = host.indexOf(']');
                if (close < 0) {
                    throw invalid(url, "an IPv6 host without its closing ']' in '" + host + "'");
                }
                name = host.substring(0, close + 1);
                colon = host.length() > close + 1 && host.charAt(close + 1) == ':' ? close + 1 : -1;
                if (colon < 0 && host.length() > close + 1) {
                    throw invalid(url, "'" + host + "' is not host[:port]");
                }
            } else if (colon >= 0 && host.indexOf(':') != colon) {
                throw invalid(url, "an IPv6 host must be in brackets, as [::1]:6379, not '" + host + "'");
            } else if (colon >= 0) {
                name = host.substring(0, colon);
            }
            if (colon >= 0) {
                try {
                    port = Integer.parseInt(host.substring(colon + 1));
                } catch (NumberFormatException e) {
                    throw invalid(url, "the port of '" + host + "' is not a number");
                }
                if (port < 1 || port > 65535) {
                    throw invalid(url, "the port of '" + host + "' is not between 1 and 65535");
                }
            }
            if (name.isEmpty()) {
                throw invalid(url, "an empty host in '" + hosts + "'");
            }
            nodes.add((tls ? "rediss://" : "redis://") + name + ":" + port);
        }
        return nodes;
    }

    private static String decode(String url, String part) {
        try {
            return URLDecoder.decode(part.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw invalid(url, "a '%' in the user, the password or the primary name is not followed by two hex digits");
        }
    }

    private static IllegalArgumentException invalid(String url, String why) {
        return new IllegalArgumentException("the Redis URL '" + redacted(url) + "' is not valid: " + why
                + "; expected " + FORMS);
    }
}
