package dev.idem.cli.config;

/**
 * A setting of the command line, found in this order: its flag, its environment variable, the
 * profile file ({@code <profile>.<key>=value}), its default.
 */
public enum Setting {
    REDIS_URL("redis-url", "IDEM_REDIS_URL", "the Redis URL (redis://host:port, redis-sentinel://host:port,...#primary or redis-cluster://host:port,...)", true),
    KEY_PREFIX("key-prefix", "IDEM_KEY_PREFIX", "the prefix of Idem's Redis keys", true),
    KAFKA_BOOTSTRAP("kafka-bootstrap", "IDEM_KAFKA_BOOTSTRAP", "the Kafka bootstrap servers", true),
    ROCKETMQ_NAMESRV("rocketmq-namesrv", "IDEM_ROCKETMQ_NAMESRV", "the RocketMQ name server address", true),
    JDBC_URL("jdbc-url", "IDEM_JDBC_URL", "the effect ledger's JDBC URL (guarded mode)", true),
    JDBC_USER("jdbc-user", "IDEM_JDBC_USER", "the effect ledger's database user", true),
    // No flag: a password on the command line is visible to every user of the machine (ps, history).
    JDBC_PASSWORD("jdbc-password", "IDEM_JDBC_PASSWORD", "the effect ledger's database password", false),
    JDBC_TABLE("jdbc-table", "IDEM_JDBC_TABLE", "the effect ledger's table", true),
    OUTBOX_TABLE("outbox-table", "IDEM_OUTBOX_TABLE", "the outbox's table (in the ledger's database)", true);

    private final String key;
    private final String variable;
    private final String description;
    private final boolean flag;

    Setting(String key, String variable, String description, boolean flag) {
        this.key = key;
        this.variable = variable;
        this.description = description;
        this.flag = flag;
    }

    /** The key in the profile file, after {@code <profile>.}. */
    public String key() {
        return key;
    }

    /** The environment variable. */
    public String variable() {
        return variable;
    }

    /** What it is, for messages. */
    public String description() {
        return description;
    }

    /** How an operator sets it, for messages: "--redis-url, IDEM_REDIS_URL or redis-url in the profile". */
    public String howToSet() {
        return (flag ? "--" + key + ", " : "") + variable + " or '" + key + "' in the profile file";
    }
}
