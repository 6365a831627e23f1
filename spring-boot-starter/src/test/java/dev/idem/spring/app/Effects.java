package dev.idem.spring.app;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** What the listeners of every context in the test JVM did, by order id. */
public final class Effects {

    private static final Map<String, AtomicInteger> CALLS = new ConcurrentHashMap<>();
    private static final Map<String, AtomicInteger> COMPENSATIONS = new ConcurrentHashMap<>();

    private static final Map<String, Boolean> SAW_LEDGER_ROW = new ConcurrentHashMap<>();

    private Effects() {
    }

    static int called(String id) {
        return CALLS.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
    }

    static void compensated(String id) {
        COMPENSATIONS.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
    }

    static void sawLedgerRow(String id, boolean saw) {
        SAW_LEDGER_ROW.merge(id, saw, Boolean::logicalAnd);
    }

    /** Per id, whether every call of its handler saw its (uncommitted) ledger row: one transaction. */
    public static Map<String, Boolean> sawLedgerRow() {
        return Map.copyOf(SAW_LEDGER_ROW);
    }

    public static int calls(String id) {
        return CALLS.getOrDefault(id, new AtomicInteger()).get();
    }

    public static int compensations(String id) {
        return COMPENSATIONS.getOrDefault(id, new AtomicInteger()).get();
    }
}
