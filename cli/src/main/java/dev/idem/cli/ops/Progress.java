package dev.idem.cli.ops;

import java.io.PrintWriter;
import java.util.function.LongSupplier;

/**
 * A progress bar on the error stream for long replays, redrawn at most ten times a second; silent
 * when the output is not a terminal. Thread-safe.
 */
public final class Progress {

    private static final int WIDTH = 30;
    private static final long REDRAW_NANOS = 100_000_000L;

    private final PrintWriter err;
    private final int total;
    private final boolean enabled;
    private final LongSupplier nanoTime;
    private int done;
    private int failed;
    private boolean drawn;
    private long drawnAt;

    /** A bar over {@code total} messages, drawn only if {@code enabled}. */
    public Progress(PrintWriter err, int total, boolean enabled) {
        this(err, total, enabled, System::nanoTime);
    }

    /** The same, reading time from {@code nanoTime} (tests). */
    Progress(PrintWriter err, int total, boolean enabled, LongSupplier nanoTime) {
        this.err = err;
        this.total = total;
        this.enabled = enabled && total > 0;
        this.nanoTime = nanoTime;
    }

    /** One message finished. */
    public synchronized void step(boolean ok) {
        done++;
        if (!ok) {
            failed++;
        }
        long now = nanoTime.getAsLong();
        // The first step always draws: nanoTime's origin is arbitrary (it may be negative).
        if (enabled && (!drawn || now - drawnAt >= REDRAW_NANOS || done == total)) {
            drawn = true;
            drawnAt = now;
            int filled = (int) ((long) WIDTH * done / total);
            err.print("\r[" + "#".repeat(filled) + ".".repeat(WIDTH - filled) + "] " + done + "/" + total
                    + (failed > 0 ? "  " + failed + " not sent" : ""));
            err.flush();
        }
    }

    /**
     * Prints a line of output above the bar: the bar's line is cleared first and drawn again at the
     * next step, so results and the bar do not run into each other on one terminal.
     */
    public synchronized void above(Runnable print) {
        if (drawn) {
            err.print("\r\u001b[2K");
            err.flush();
            drawn = false;
        }
        print.run();
    }

    /** Ends the bar's line. */
    public synchronized void finish() {
        if (drawn) {
            err.println();
            err.flush();
        }
    }
}
