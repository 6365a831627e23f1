package dev.idem.sample.inventory.demo;

import dev.idem.cli.Environment;
import dev.idem.cli.Idem;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The end of the demo: an operator looks at the dead letters with the {@code idem} command line
 * (its entry point, in this JVM) and replays one. The replayed order is still poison, so the
 * service runs it once more, rejects it again and dead-letters it again; its refund is not repeated.
 */
final class Operator {

    private static final Duration REPLAY_TIMEOUT = Duration.ofSeconds(30);

    private final Environment environment;
    private final PrintStream out;

    Operator(Infrastructure infrastructure, Infrastructure.Database database, Names names, Path home, PrintStream out) {
        Map<String, String> variables = new HashMap<>();
        variables.put("IDEM_REDIS_URL", infrastructure.redis.toString());
        variables.put("IDEM_KEY_PREFIX", names.keyPrefix());
        variables.put("IDEM_KAFKA_BOOTSTRAP", infrastructure.kafka);
        variables.put("IDEM_JDBC_URL", database.jdbcUrl());
        variables.put("IDEM_JDBC_USER", database.user());
        variables.put("IDEM_JDBC_PASSWORD", database.password());
        if (infrastructure.rocketMq != null) {
            variables.put("IDEM_ROCKETMQ_NAMESRV", infrastructure.rocketMq);
        }
        this.environment = new Environment(variables, home, "demo-host", "demo-operator", Clock.systemDefaultZone(), false);
        this.out = out;
    }

    /** Runs {@code idem args...}, printing the command and what it prints; returns its exit code. */
    int idem(String... args) {
        out.println("$ idem " + String.join(" ", args));
        PrintWriter writer = new PrintWriter(out, true);
        int code = Idem.run(environment, writer, writer, args);
        writer.flush();
        out.println("[exit " + code + "]");
        return code;
    }

    /** Lists the dead letters, replays {@code orderId}'s and checks the service ran it exactly once more. */
    boolean replay(Names names, String orderId, Observations observed) throws Exception {
        String topic = names.kafkaDeadLetters();
        String key = orderId + ":deduct";
        out.println("(the demo sets IDEM_REDIS_URL, IDEM_KEY_PREFIX, IDEM_KAFKA_BOOTSTRAP, IDEM_ROCKETMQ_NAMESRV and IDEM_JDBC_URL for these commands)");
        boolean ok = idem("dlq", "list", "-b", "kafka", "-t", topic) == Idem.OK;
        if (environment.variable("IDEM_ROCKETMQ_NAMESRV") != null) {
            ok &= idem("dlq", "list", "-b", "rocketmq", "-t", names.rocketMqDeadLetters()) == Idem.OK;
        }
        int lettersBefore = observed.keyCounts(topic).getOrDefault(orderId, 0);
        ok &= idem("dlq", "replay", "-b", "kafka", "-t", topic, "--key", key, "--yes") == Idem.OK;
        long deadline = System.nanoTime() + REPLAY_TIMEOUT.toNanos();
        int lettersAfter = lettersBefore;
        while (lettersAfter == lettersBefore && System.nanoTime() < deadline) {
            TimeUnit.MILLISECONDS.sleep(250);
            lettersAfter = observed.keyCounts(topic).getOrDefault(orderId, 0);
        }
        ok &= idem("dlq", "list", "-b", "kafka", "-t", topic, "--key", key) == Idem.OK;
        int refunds = observed.rowsPerOrder("refund").getOrDefault(orderId, 0);
        boolean once = lettersAfter == lettersBefore + 1 && refunds == 1;
        out.println(once
                ? "The replay went through once: " + orderId + " ran again, was rejected again (still poison) and"
                        + " dead-lettered again; its refund was not repeated (refunds of it: " + refunds + ")."
                : "The replay did not go through once: dead letters of " + orderId + " went from " + lettersBefore
                        + " to " + lettersAfter + " in " + REPLAY_TIMEOUT.toSeconds() + " s, refunds of it: " + refunds);
        return ok && once;
    }
}
