package dev.idem.cli;

import dev.idem.cli.commands.ClaimsCommand;
import dev.idem.cli.commands.CompensationsCommand;
import dev.idem.cli.commands.DlqCommand;
import dev.idem.cli.commands.OutboxCommand;
import dev.idem.cli.config.Setting;
import dev.idem.cli.config.CommandConfig;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Map;
import picocli.AutoComplete;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

/**
 * The top command, {@code idem}: its options (connections, profile, verbosity) are accepted by every
 * subcommand, before or after its name.
 */
@Command(name = "idem", mixinStandardHelpOptions = true, scope = ScopeType.INHERIT,
        versionProvider = Idem.Version.class, sortOptions = false, usageHelpAutoWidth = true,
        description = "Inspect and replay Idem's dead letters, finish compensations, inspect and reset claims, "
                + "look after the outbox.",
        subcommands = {DlqCommand.class, ClaimsCommand.class, CompensationsCommand.class, OutboxCommand.class,
                AutoComplete.GenerateCompletion.class},
        footer = {"", "Settings: a flag, else its environment variable, else the profile file",
                "  ~/.idem/profiles.properties, lines <profile>.<setting>=value",
                "  (default.redis-url=redis://127.0.0.1:6379).",
                "Exit codes: 0 ok; 1 some messages failed or were refused; 2 usage or connection error.",
                "Shell completion: source <(idem generate-completion)"})
public final class IdemCommand implements Runnable {

    @Spec
    CommandSpec spec;

    @Option(names = "--redis-url", scope = ScopeType.INHERIT, paramLabel = "<url>",
            description = "Redis holding the claims: redis://[user:password@]host:port, "
                    + "redis-sentinel://host:26379,...#primary-name or redis-cluster://host:6379,... (IDEM_REDIS_URL)")
    String redisUrl;

    @Option(names = "--key-prefix", scope = ScopeType.INHERIT, paramLabel = "<prefix>",
            description = "Prefix of Idem's Redis keys, as the consumers use it; default idem: (IDEM_KEY_PREFIX)")
    String keyPrefix;

    @Option(names = "--kafka-bootstrap", scope = ScopeType.INHERIT, paramLabel = "<servers>",
            description = "Kafka bootstrap servers (IDEM_KAFKA_BOOTSTRAP)")
    String kafkaBootstrap;

    @Option(names = "--rocketmq-namesrv", scope = ScopeType.INHERIT, paramLabel = "<address>",
            description = "RocketMQ name server (IDEM_ROCKETMQ_NAMESRV)")
    String rocketMqNameServer;

    @Option(names = "--jdbc-url", scope = ScopeType.INHERIT, paramLabel = "<url>",
            description = "The effect ledger's database, for guarded consumers; its password only from "
                    + "IDEM_JDBC_PASSWORD or the profile (IDEM_JDBC_URL)")
    String jdbcUrl;

    @Option(names = "--jdbc-user", scope = ScopeType.INHERIT, paramLabel = "<user>",
            description = "The ledger database's user (IDEM_JDBC_USER)")
    String jdbcUser;

    @Option(names = "--jdbc-table", scope = ScopeType.INHERIT, paramLabel = "<table>",
            description = "The ledger's table; default idem_effect (IDEM_JDBC_TABLE)")
    String jdbcTable;

    @Option(names = "--outbox-table", scope = ScopeType.INHERIT, paramLabel = "<table>",
            description = "The outbox's table, in the ledger's database; default idem_outbox (IDEM_OUTBOX_TABLE)")
    String outboxTable;

    @Option(names = "--profile", scope = ScopeType.INHERIT, paramLabel = "<name>",
            description = "Profile in the profile file; default 'default' (IDEM_PROFILE)")
    String profile;

    @Option(names = "--profile-file", scope = ScopeType.INHERIT, paramLabel = "<file>",
            description = "Profile file; default ~/.idem/profiles.properties (IDEM_PROFILE_FILE)")
    Path profileFile;

    @Option(names = "--verbose", scope = ScopeType.INHERIT,
            description = "Show stack traces and the clients' warnings")
    boolean verbose;

    private final Environment environment;

    /** The command in {@code environment}. */
    public IdemCommand(Environment environment) {
        this.environment = environment;
    }

    /** Where the command runs. */
    public Environment environment() {
        return environment;
    }

    /** The settings from flags, environment and profile. */
    public CommandConfig settings() {
        Map<Setting, String> flags = new EnumMap<>(Setting.class);
        put(flags, Setting.REDIS_URL, redisUrl);
        put(flags, Setting.KEY_PREFIX, keyPrefix);
        put(flags, Setting.KAFKA_BOOTSTRAP, kafkaBootstrap);
        put(flags, Setting.ROCKETMQ_NAMESRV, rocketMqNameServer);
        put(flags, Setting.JDBC_URL, jdbcUrl);
        put(flags, Setting.JDBC_USER, jdbcUser);
        put(flags, Setting.JDBC_TABLE, jdbcTable);
        put(flags, Setting.OUTBOX_TABLE, outboxTable);
        return CommandConfig.resolve(flags, environment, profileFile, profile);
    }

    private static void put(Map<Setting, String> flags, Setting setting, String value) {
        if (value != null) {
            flags.put(setting, value);
        }
    }

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "a command is missing: dlq, claims, compensations or outbox");
    }
}
