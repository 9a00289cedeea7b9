package ca.helu.pallas.runtime.store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * Stream events kept in this process, bounded in bytes (the oldest streams go first past it) and in
 * time (a stream is kept for {@code keep} after its last event): enough for a client to come back
 * after a broken connection, never a growing heap (docs/runtime.md, "Limits").
 */
public final class InMemoryEventStore implements EventStore {
  /** The default bound of the events kept: 16 MiB, counted as two bytes per character. */
  public static final long DEFAULT_BYTES = 16L << 20;

  /** The default time a stream is kept after its last event. */
  public static final Duration DEFAULT_KEEP = Duration.ofMinutes(5);

  private record Key(String agent, String session, String stream) {}

  private static final class Kept {
    final List<Event> events = new ArrayList<>();
    long bytes;
    long lastAppend;
  }

  private final long maxBytes;
  private final long keepNanos;
  private final LongSupplier clock;
  // in order of last event, the oldest first; guarded by this
  private final LinkedHashMap<Key, Kept> streams = new LinkedHashMap<>();
  private long bytes;

  public InMemoryEventStore() {
    this(DEFAULT_BYTES, DEFAULT_KEEP, System::nanoTime);
  }

  InMemoryEventStore(long maxBytes, Duration keep, LongSupplier clock) {
    this.maxBytes = maxBytes;
    this.keepNanos = keep.toNanos();
    this.clock = clock;
  }

  @Override
  public synchronized void append(String agent, String session, String stream, Event event) {
    Key key = new Key(agent, session, stream);
    Kept kept = streams.remove(key); // re-inserted last: the order is by last event
    if (kept == null) {
      kept = new Kept();
    }
    long size = 2L * event.message().length();
    kept.events.add(event);
    kept.bytes += size;
    kept.lastAppend = clock.getAsLong();
    bytes += size;
    streams.put(key, kept);
    evict();
  }

  private void evict() {
    long now = clock.getAsLong();
    Iterator<Map.Entry<Key, Kept>> oldest = streams.entrySet().iterator();
    while (oldest.hasNext()) {
      Kept kept = oldest.next().getValue();
      if (bytes <= maxBytes && now - kept.lastAppend < keepNanos) {
        return;
      }
      bytes -= kept.bytes;
      oldest.remove();
    }
  }

  @Override
  public synchronized Optional<List<Event>> after(
      String agent, String session, String stream, long seq) {
    evict();
    Kept kept = streams.get(new Key(agent, session, stream));
    if (kept == null) {
      return Optional.empty();
    }
    return Optional.of(kept.events.stream().filter(e -> e.seq() > seq).toList());
  }

  @Override
  public synchronized void forget(String agent, String session) {
    streams
        .entrySet()
        .removeIf(e -> {
          if (e.getKey().agent().equals(agent) && e.getKey().session().equals(session)) {
            bytes -= e.getValue().bytes;
            return true;
          }
          return false;
        });
  }
}
