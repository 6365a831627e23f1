package dev.idem.core.outbox;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * An in-memory {@link OutboxPublisher} for tests of the relay: it keeps what it published, calls
 * destinations in {@code poison} poison, and answers retry to everything while {@code down}.
 */
final class RecordingPublisher implements OutboxPublisher {

    final List<OutboxRecord> published = new CopyOnWriteArrayList<>();
    final Set<String> poison;
    final Set<String> failing = java.util.concurrent.ConcurrentHashMap.newKeySet();
    volatile boolean down;

    RecordingPublisher(Set<String> poison) {
        this.poison = poison;
    }

    @Override
    public List<Result> publish(List<OutboxRecord> records) {
        List<Result> results = new ArrayList<>();
        for (OutboxRecord record : records) {
            if (poison.contains(record.destination())) {
                results.add(new Poison("destination topic " + record.destination() + " does not exist"));
            } else if (down || failing.contains(record.destination())) {
                results.add(new Retry("broker down"));
            } else {
                published.add(record);
                results.add(Published.INSTANCE);
            }
        }
        return results;
    }
}
