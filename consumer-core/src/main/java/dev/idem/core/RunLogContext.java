package dev.idem.core;

import java.util.stream.IntStream;
import org.slf4j.MDC;

/**
 * The MDC entries a message's run carries for the handler's and Idem's logs: {@code idem.key} and
 * {@code idem.topic} from its claim on, {@code idem.attempt} once it is claimed; all three gone when
 * the run ends.
 */
final class RunLogContext {

    static final String KEY = "idem.key";
    static final String TOPIC = "idem.topic";
    static final String ATTEMPT = "idem.attempt";
    // The usual attempts' text, made once: Integer.toString per message showed in allocation
    // profiles of the claim path.
    private static final String[] ATTEMPTS = IntStream.range(0, 16).mapToObj(Integer::toString).toArray(String[]::new);

    private RunLogContext() {
    }

    static void enter(IdempotencyKey key) {
        MDC.put(KEY, key.value());
        MDC.put(TOPIC, key.topic());
    }

    static void attempt(int attempt) {
        MDC.put(ATTEMPT, attempt >= 0 && attempt < ATTEMPTS.length ? ATTEMPTS[attempt] : Integer.toString(attempt));
    }

    static void leave() {
        MDC.remove(KEY);
        MDC.remove(TOPIC);
        MDC.remove(ATTEMPT);
    }
}
