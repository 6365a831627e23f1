package dev.idem.micronaut.app;

import jakarta.inject.Singleton;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** What the test application's handlers and compensations were called with (the database holds the effects). */
@Singleton
public class Effects {
    public final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    public final Map<String, AtomicInteger> compensations = new ConcurrentHashMap<>();

    public int call(String broker, String id) {
        return calls.computeIfAbsent(broker + ":" + id, k -> new AtomicInteger()).incrementAndGet();
    }

    public void compensated(String broker, String id) {
        compensations.computeIfAbsent(broker + ":" + id, k -> new AtomicInteger()).incrementAndGet();
    }

    public int calls(String broker, String id) {
        AtomicInteger n = calls.get(broker + ":" + id);
        return n == null ? 0 : n.get();
    }

    public int compensations(String broker, String id) {
        AtomicInteger n = compensations.get(broker + ":" + id);
        return n == null ? 0 : n.get();
    }
}
