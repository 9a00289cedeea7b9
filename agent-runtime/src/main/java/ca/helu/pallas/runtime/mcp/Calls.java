package ca.helu.pallas.runtime.mcp;

import ca.helu.pallas.runtime.http.CallCancels;
import ca.helu.pallas.runtime.loop.Cancellation;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One agent's requests in flight, by MCP session and JSON-RPC id (docs/runtime.md, "Deadlines and
 * cancellation"): each has a {@link Cancellation}, which the edge's {@code
 * notifications/cancelled}, the session's {@code DELETE} and, on a session whose streams are not
 * resumable, a failed heartbeat on its response stream (the client disconnected) stop.
 */
final class Calls implements CallCancels {
  /** The request attribute holding the request's Cancellation, for the transport's context. */
  static final String ATTRIBUTE = "pallas.call";

  private record Call(String id, Cancellation cancellation) {}

  private final Map<String, Set<Call>> bySession = new ConcurrentHashMap<>();
  private final Duration heartbeat;

  Calls(Duration heartbeat) {
    this.heartbeat = heartbeat;
  }

  /** A request in flight; closing it (once answered) forgets it. */
  final class Open implements AutoCloseable {
    private final String session;
    private final Call call;
    private final CallStream stream;

    private Open(String session, Call call, CallStream stream) {
      this.session = session;
      this.call = call;
      this.stream = stream;
    }

    /** The response to hand to the transport: its stream has heartbeats. */
    HttpServletResponse response() {
      return stream;
    }

    @Override
    public void close() {
      stream.close();
      bySession.computeIfPresent(
          session,
          (k, calls) -> {
            calls.remove(call);
            return calls.isEmpty() ? null : calls;
          });
    }
  }

  /**
   * Registers the request with JSON-RPC id {@code id} ({@link CallCancels#key}) on {@code session};
   * its Cancellation is put on the request for the transport's context. With {@code
   * stopOnDisconnect} a client found gone by a heartbeat stops the call.
   */
  Open open(
      String session,
      String id,
      HttpServletRequest request,
      HttpServletResponse response,
      boolean stopOnDisconnect) {
    Cancellation cancellation = new Cancellation();
    Call call = new Call(id, cancellation);
    bySession.compute(
        session,
        (k, calls) -> {
          Set<Call> all = calls == null ? new HashSet<>() : calls;
          all.add(call);
          return all;
        });
    request.setAttribute(ATTRIBUTE, cancellation);
    return new Open(
        session,
        call,
        new CallStream(
            response,
            heartbeat,
            stopOnDisconnect
                ? () -> cancellation.stop(Cancellation.Reason.DISCONNECTED)
                : () -> {}));
  }

  @Override
  public boolean cancel(String session, String requestId) {
    List<Cancellation> matching = new ArrayList<>();
    bySession.computeIfPresent(
        session,
        (k, calls) -> {
          calls.stream()
              .filter(c -> c.id().equals(requestId))
              .forEach(c -> matching.add(c.cancellation()));
          return calls;
        });
    boolean stopped = false;
    for (Cancellation c : matching) {
      stopped |= c.stop(Cancellation.Reason.CANCELLED);
    }
    return stopped;
  }

  /** The client deleted the session: its calls in flight stop. */
  void sessionDeleted(String session) {
    List<Cancellation> all = new ArrayList<>();
    bySession.computeIfPresent(
        session,
        (k, calls) -> {
          calls.forEach(c -> all.add(c.cancellation()));
          return null;
        });
    all.forEach(c -> c.stop(Cancellation.Reason.SESSION_DELETED));
  }
}
