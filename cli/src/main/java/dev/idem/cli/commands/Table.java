package dev.idem.cli.commands;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A plain text table: a header row, columns padded to their widest cell, long cells cut except in the
 * last column (nothing follows it). Printed whole ({@link #print}), or streamed row by row as results
 * come in ({@link #expect}, {@link #printHeader}, {@link #printRow}: thread-safe). Otherwise not
 * thread-safe.
 */
final class Table {

    // Wide enough for most business keys and exception names; the JSON output has every value in full.
    private static final int MAX_CELL = 100;

    private final List<String> header;
    private final List<List<String>> rows = new ArrayList<>();
    private int @Nullable [] streamed;

    Table(String... header) {
        this.header = List.of(header);
    }

    Table row(@Nullable Object... cells) {
        rows.add(cells(cells));
        return this;
    }

    /** Sizes the columns for a row printed later with {@link #printRow}. */
    Table expect(@Nullable Object... cells) {
        return row(cells);
    }

    /** Prints the header, its columns as wide as the rows expected, before any row is known. */
    synchronized void printHeader(PrintWriter out) {
        int[] widths = widths();
        streamed = widths;
        line(out, header, widths);
        out.flush();
    }

    /** Prints one row now, in the columns of {@link #printHeader}: a run cut short keeps what it printed. */
    synchronized void printRow(PrintWriter out, @Nullable Object... cells) {
        line(out, cells(cells), Objects.requireNonNull(streamed, "printHeader before printRow"));
        out.flush();
    }

    private static List<String> cells(Object... cells) {
        List<String> row = new ArrayList<>();
        for (int i = 0; i < cells.length; i++) {
            String text = cells[i] == null ? "-" : cells[i].toString().replace('\n', ' ').replace('\r', ' ');
            row.add(i == cells.length - 1 ? text : cut(text));
        }
        return row;
    }

    boolean isEmpty() {
        return rows.isEmpty();
    }

    void print(PrintWriter out) {
        int[] widths = widths();
        line(out, header, widths);
        rows.forEach(row -> line(out, row, widths));
    }

    private int[] widths() {
        int[] widths = new int[header.size()];
        for (int i = 0; i < widths.length; i++) {
            widths[i] = header.get(i).length();
            for (List<String> row : rows) {
                widths[i] = Math.max(widths[i], row.get(i).length());
            }
        }
        return widths;
    }

    private static void line(PrintWriter out, List<String> cells, int[] widths) {
        StringBuilder line = new StringBuilder();
        for (int i = 0; i < cells.size(); i++) {
            String cell = cells.get(i);
            line.append(cell);
            if (i < cells.size() - 1) {
                line.append(" ".repeat(Math.max(0, widths[i] - cell.length()) + 2));
            }
        }
        out.println(line);
    }

    private static String cut(String text) {
        return text.length() <= MAX_CELL ? text : text.substring(0, MAX_CELL - 1) + "…";
    }
}
