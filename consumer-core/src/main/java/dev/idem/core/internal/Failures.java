package dev.idem.core.internal;

import dev.idem.core.NonRetryableException;
import java.util.List;

/** The one place where exceptions are classified (fatal or retryable) and described, bounded. */
public final class Failures {

    // Header and Redis field sizes: large enough to identify a failure, small enough for headers.
    private static final int MAX_MESSAGE = 500;
    private static final int MAX_STACK_TRACE = 4_000;

    private final List<Class<? extends Throwable>> fatal;

    /** @param fatal exception classes that must not be retried, besides {@link NonRetryableException} */
    public Failures(List<Class<? extends Throwable>> fatal) {
        this.fatal = List.copyOf(fatal);
    }

    /** Whether retrying cannot help: the exception or one of its causes is of a fatal class. */
    public boolean isFatal(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof NonRetryableException) {
                return true;
            }
            for (Class<? extends Throwable> type : fatal) {
                if (type.isInstance(t)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** "Class: message", bounded. */
    public static String describe(Throwable failure) {
        return failure == null ? "" : bound(failure.getClass().getName() + ": " + message(failure), MAX_MESSAGE);
    }

    /** The exception's message, bounded; empty when it has none. */
    public static String message(Throwable failure) {
        return failure == null || failure.getMessage() == null ? "" : bound(failure.getMessage(), MAX_MESSAGE);
    }

    /** The stack trace with its causes, rendered only up to the bound (deep traces are common). */
    public static String stackTrace(Throwable failure) {
        StringBuilder out = new StringBuilder();
        for (Throwable t = failure; t != null && out.length() < MAX_STACK_TRACE; t = t.getCause() == t ? null : t.getCause()) {
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

    private static String bound(String text, int max) {
        return text.length() <= max ? text : text.substring(0, max - 3) + "...";
    }
}
