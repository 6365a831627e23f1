package dev.idem.core.internal;

import dev.idem.core.CheckUnavailableException;
import dev.idem.core.DuplicateEffectException;
import dev.idem.core.InfrastructureException;
import dev.idem.core.NonRetryableException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The one place where exceptions are classified and described, bounded. A handler's failure is
 * one of: a crash (the process cannot go on: {@link #isCrash}), infrastructure trouble that is not
 * the message's fault ({@link #isInfrastructure}: deferred, never counted), fatal (never retried:
 * {@link #isFatal}), or retryable (everything else).
 */
public final class Failures {

    // Infrastructure by default: the database or a remote service could not be reached, or a
    // transaction was cut off by a failover. Retrying the same message later will work.
    private static final List<Class<? extends Throwable>> INFRASTRUCTURE = List.of(InfrastructureException.class,
            SQLTransientException.class, SQLRecoverableException.class, SQLNonTransientConnectionException.class,
            ConnectException.class, NoRouteToHostException.class, UnknownHostException.class);

    // Causes followed at most: deeper chains are wrappers of wrappers, and a chain may loop (A -> B -> A).
    private static final int MAX_CAUSES = 32;
    // Header and Redis field sizes: large enough to identify a failure, small enough for headers.
    private static final int MAX_MESSAGE = 500;
    private static final int MAX_STACK_TRACE = 4_000;

    private final List<Class<? extends Throwable>> fatal;
    private final List<Class<? extends Throwable>> infrastructure;

    /**
     * @param fatal          exception classes that must not be retried, besides {@link NonRetryableException}
     * @param infrastructure exception classes that mean infrastructure trouble, besides the defaults
     */
    public Failures(List<Class<? extends Throwable>> fatal, List<Class<? extends Throwable>> infrastructure) {
        this.fatal = List.copyOf(fatal);
        this.infrastructure = List.copyOf(infrastructure);
    }

    /**
     * Whether an {@link Error} means the process cannot go on (out of memory, a broken VM), so the
     * message is left as a crash would leave it. Other errors ({@code StackOverflowError} on a deep
     * payload, a {@code LinkageError} in the handler's code) are the handler's failure.
     */
    public static boolean isCrash(Throwable failure) {
        return failure instanceof VirtualMachineError && !(failure instanceof StackOverflowError);
    }

    /**
     * The failure and its causes, outermost first: each once, at most {@value #MAX_CAUSES}, so a
     * chain that loops back on itself (A caused by B caused by A) ends.
     */
    public static List<Throwable> causes(@Nullable Throwable failure) {
        List<Throwable> chain = new ArrayList<>();
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = failure; t != null && chain.size() < MAX_CAUSES && seen.add(t); t = t.getCause()) {
            chain.add(t);
        }
        return chain;
    }

    /** The innermost cause {@link #causes} reaches (the failure itself when it has none). */
    public static @Nullable Throwable root(@Nullable Throwable failure) {
        List<Throwable> chain = causes(failure);
        return chain.isEmpty() ? null : chain.get(chain.size() - 1);
    }

    /** The system of record's refusal anywhere in the cause chain (an interceptor may wrap it), or null. */
    public static @Nullable DuplicateEffectException refusal(Throwable failure) {
        return find(failure, DuplicateEffectException.class);
    }

    private static <E extends Throwable> @Nullable E find(Throwable failure, Class<E> type) {
        for (Throwable t : causes(failure)) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
        }
        return null;
    }

    /**
     * Whether the failure is infrastructure trouble, not the message's fault: an
     * {@link InfrastructureException}, a transient or connection SQL error (SQL state class 08,
     * PostgreSQL's 57P), a transaction rolled back by the database (class 40: a deadlock, a
     * serialization failure), a refused or unreachable connection, or a user-listed class, anywhere
     * in the cause chain. A fatal class wins over it.
     */
    public boolean isInfrastructure(Throwable failure) {
        if (isFatal(failure)) {
            return false;
        }
        for (Throwable t : causes(failure)) {
            if (anyInstance(INFRASTRUCTURE, t) || anyInstance(infrastructure, t)) {
                return true;
            }
            if (t instanceof SQLException sql && sql.getSQLState() != null
                    && (sql.getSQLState().startsWith("08") || sql.getSQLState().startsWith("57P")
                    || sql.getSQLState().startsWith("40"))) {
                return true;
            }
        }
        return false;
    }

    /** Whether the business check's own store failed ({@link CheckUnavailableException} in the chain). */
    public static boolean isCheckUnavailable(Throwable failure) {
        return find(failure, CheckUnavailableException.class) != null;
    }

    private static boolean anyInstance(List<Class<? extends Throwable>> types, Throwable t) {
        for (Class<? extends Throwable> type : types) {
            if (type.isInstance(t)) {
                return true;
            }
        }
        return false;
    }

    /** Whether retrying cannot help: the exception or one of its causes is of a fatal class. */
    public boolean isFatal(Throwable failure) {
        for (Throwable t : causes(failure)) {
            if (t instanceof NonRetryableException || anyInstance(fatal, t)) {
                return true;
            }
        }
        return false;
    }

    /** "Class: message", bounded. */
    public static String describe(@Nullable Throwable failure) {
        return failure == null ? "" : bound(failure.getClass().getName() + ": " + message(failure), MAX_MESSAGE);
    }

    /** The exception's message, bounded; empty when it has none. */
    public static String message(@Nullable Throwable failure) {
        return failure == null || failure.getMessage() == null ? "" : bound(failure.getMessage(), MAX_MESSAGE);
    }

    /** The stack trace with its causes, rendered only up to the bound (deep traces are common). */
    public static String stackTrace(@Nullable Throwable failure) {
        StringBuilder out = new StringBuilder();
        for (Throwable t : causes(failure)) {
            if (out.length() >= MAX_STACK_TRACE) {
                break;
            }
            out.append(t == failure ? "" : "Caused by: ").append(t).append('\n');
            for (StackTraceElement frame : t.getStackTrace()) {
                if (out.length() >= MAX_STACK_TRACE) {
                    break;
                }
                out.append("\tat ").append(frame).append('\n');
            }
        }
        return bound(out.toString(), MAX_STACK_TRACE);
    }

    /** The class name of "class: message" as {@link #describe} wrote it; empty when there is none. */
    public static String classOf(String described) {
        int colon = described == null ? -1 : described.indexOf(": ");
        return colon < 0 ? (described == null ? "" : described) : described.substring(0, colon);
    }

    /** The message of "class: message" as {@link #describe} wrote it; empty when there is none. */
    public static String messageOf(String described) {
        int colon = described == null ? -1 : described.indexOf(": ");
        return colon < 0 ? "" : described.substring(colon + 2);
    }

    private static String bound(String text, int max) {
        return text.length() <= max ? text : text.substring(0, max - 3) + "...";
    }
}
