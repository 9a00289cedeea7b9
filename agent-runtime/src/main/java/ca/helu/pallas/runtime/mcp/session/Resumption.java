package ca.helu.pallas.runtime.mcp.session;

import ca.helu.pallas.runtime.store.EventStore;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Resumption of response streams (MCP 2025-11-25, "Resumability and Redelivery"; docs/runtime.md,
 * "Sessions"): a GET with {@code Last-Event-ID} gets the events its client missed, then the rest,
 * from the stream itself when it runs in this process, else from the {@link EventStore}, which
 * every replica shares.
 */
final class Resumption {
  private final String agent;
  private final EventStore events;
  private final Duration follow;
  // the resumable response streams running here, by stream id
  private final Map<String, SseConnection> streams = new ConcurrentHashMap<>();

  /**
   * @param follow how long a stream that runs on no replica known here is followed in the store
   */
  Resumption(String agent, EventStore events, Duration follow) {
    this.agent = agent;
    this.events = events;
    this.follow = follow;
  }

  /** A resumable stream has begun here. */
  void running(String stream, SseConnection connection) {
    streams.put(stream, connection);
  }

  /** The stream has ended here. */
  void ended(String stream) {
    streams.remove(stream);
  }

  /**
   * Runs a stream's request again on a resuming client's connection, after its kept events ({@code
   * sent}, all of them, which the client now has).
   */
  interface Rerun {
    void run(
        String stream,
        EventStore.Orphan orphan,
        List<EventStore.Event> sent,
        SseConnection.Sink sink);
  }

  /**
   * A client resuming a response stream after the event {@code lastEventId}: the events it missed,
   * then the rest, from the stream itself when it runs here, else from the event store (a stream of
   * another replica, or of a pod since gone, whose request {@code rerun} runs again here when no
   * replica runs it any more); false when the stream is not known (then the GET opens a listening
   * stream, as without the header).
   */
  boolean resume(
      HttpServletRequest request,
      HttpServletResponse response,
      String session,
      String lastEventId,
      Rerun rerun)
      throws IOException {
    int separator = lastEventId.lastIndexOf('_');
    long after = afterEvent(lastEventId, separator);
    if (after < 0) {
      return false;
    }
    String streamId = lastEventId.substring(0, separator);
    SseConnection running = streams.get(streamId);
    if (running != null && running.session().equals(session)) {
      SseConnection.Sink sink = SseConnection.open(request, response);
      SseConnection.whenEnded(sink.async(), () -> running.ended(sink.async()));
      running.resume(sink, after);
      return true;
    }
    var kept = events.after(agent, session, streamId, 0);
    if (kept.isEmpty()) {
      return false;
    }
    SseConnection.Sink sink = SseConnection.open(request, response);
    response.flushBuffer();
    if (kept.get().stream().anyMatch(e -> e.last() && e.seq() <= after)) {
      sink.complete(); // the client has had the whole stream
      return true;
    }
    Thread.startVirtualThread(() -> followStored(sink, session, streamId, after, rerun));
    return true;
  }

  /** The number in {@code <stream>_<n>}; -1 when it is not one of our event ids. */
  private static long afterEvent(String lastEventId, int separator) {
    try {
      return separator < 1 ? -1 : Long.parseLong(lastEventId.substring(separator + 1));
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /**
   * Writes a stream's events from the store as they are kept, until its last event, the client
   * leaves, or {@code follow} passes (the client then resumes again from its last event). While no
   * event comes, it asks once a second whether the replica that runs the stream is gone, and if so
   * takes the stream over and runs its request again ({@code rerun}).
   */
  private void followStored(
      SseConnection.Sink sink, String session, String streamId, long after, Rerun rerun) {
    long deadline = System.nanoTime() + follow.toNanos();
    long sent = after;
    long nextAdopt = System.nanoTime();
    boolean handedOver = false;
    try {
      while (System.nanoTime() < deadline) {
        List<EventStore.Event> kept =
            events.after(agent, session, streamId, sent).orElse(List.of());
        if (kept.isEmpty() && System.nanoTime() - nextAdopt >= 0) {
          nextAdopt = System.nanoTime() + ADOPT_EVERY.toNanos();
          var orphan = events.adopt(agent, session, streamId);
          if (orphan.isPresent()) {
            // the events the client has not had yet go first, then the turn run again
            List<EventStore.Event> all =
                events.after(agent, session, streamId, 0).orElse(List.of());
            for (EventStore.Event e : all) {
              if (e.seq() > sent && !write(sink, streamId, e)) {
                return;
              }
            }
            handedOver = true;
            rerun.run(streamId, orphan.get(), all, sink);
            return;
          }
        }
        for (EventStore.Event e : kept) {
          if (!write(sink, streamId, e)) {
            return;
          }
          sent = e.seq();
          if (e.last()) {
            return;
          }
        }
        Thread.sleep(FOLLOW_POLL);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      if (!handedOver) {
        sink.complete();
      }
    }
  }

  private static boolean write(SseConnection.Sink sink, String streamId, EventStore.Event e) {
    sink.writer()
        .write(
            "id: "
                + SseConnection.eventId(streamId, e.seq())
                + "\nevent: message\ndata: "
                + e.message()
                + "\n\n");
    sink.writer().flush();
    return !sink.writer().checkError();
  }

  /** How often a followed stream that gets no event asks whether its replica is gone. */
  private static final Duration ADOPT_EVERY = Duration.ofSeconds(1);

  /** How often a followed stream's store is read for new events. */
  private static final Duration FOLLOW_POLL = Duration.ofMillis(100);
}
