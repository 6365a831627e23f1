package dev.idem.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** An operator at a terminal-less shell: runs the command line in-process with its own environment. */
final class Operator {

    private static final Logger LOG = LoggerFactory.getLogger(Operator.class);

    private final Map<String, String> variables;
    private final Path home;

    Operator(Map<String, String> variables, Path home) {
        this.variables = new HashMap<>(variables);
        this.home = home;
    }

    /** What one command printed and returned. */
    record Run(int code, String out, String err) {
        @Override
        public String toString() {
            return "exit " + code + "\n--- out\n" + out + "--- err\n" + err;
        }
    }

    Run idem(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        Environment environment = new Environment(variables, home, "ops-host", "night-operator", Clock.systemUTC(), false);
        int code = Idem.run(environment, new PrintWriter(out, true), new PrintWriter(err, true), args);
        Run run = new Run(code, out.toString(), err.toString());
        // The session as an operator sees it (the README's sample comes from here).
        LOG.info("$ idem {}\n{}{}[exit {}]", String.join(" ", args), run.out(), run.err(), code);
        return run;
    }

    Operator with(String name, String value) {
        Operator copy = new Operator(variables, home);
        copy.variables.put(name, value);
        return copy;
    }
}
