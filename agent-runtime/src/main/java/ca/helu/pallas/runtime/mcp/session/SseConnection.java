package ca.helu.pallas.runtime.mcp.session;

import ca.helu.pallas.runtime.store.EventStore;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.ProgressNotification;
import io.modelcontextprotocol.spec.McpStreamableServerTransport;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * One SSE stream (a POST's response stream or a GET's listening stream), as the SDK's session
 * writes to it: each JSON-RPC message one {@code message} event with an id, {@code <stream>_<n>}
 * (docs/contract.md, "Streams"). Written under a lock, so that two messages of one stream never
 * interleave.
 *
 * <p>A resumable stream (a session of protocol 2025-11-25 or later) starts with a priming event (an
 * id, a {@code retry} field, no data) and keeps every event in the {@link EventStore}; when its
 * client's connection breaks the stream goes on (the call is not cancelled: MCP 2025-11-25,
 * "Resumability and Redelivery"), and a client that comes back with {@code Last-Event-ID} gets the
 * events it missed, then the rest as they come ({@link #resume}). A stream that is not resumable
 * ends with its connection.
 */
final class SseConnection implements McpStreamableServerTransport {
  private static final Logger LOG = LoggerFactory.getLogger(SseConnection.class);

  /** A client's connection to the stream. */
  record Sink(AsyncContext async, PrintWriter writer) {
    void complete() {
      try {
        async.complete();
      } catch (RuntimeException e) {
        // already completed, or its connection is gone
      }
    }
  }

  private final String agent;
  private final String session;
  private final String stream;
  private final EventStore events; // null: not resumable
  private final McpJsonMapper json;
  private final ReentrantLock lock = new ReentrantLock();
  private Sink sink; // guarded by lock; null while no client is connected
  private long seq; // guarded by lock
  private boolean closed; // guarded by lock
  // added to the progress of a turn run again, above what the stream sent before; set before the
  // turn runs, and by restarting under the lock
  private volatile double progressOffset;

  /**
   * @param events where the events are kept for the client to resume; null: the stream is not
   *     resumable
   */
  SseConnection(
      String agent,
      String session,
      String stream,
      EventStore events,
      McpJsonMapper json,
      Sink first) {
    this.agent = agent;
    this.session = session;
    this.stream = stream;
    this.events = events;
    this.json = json;
    this.sink = first;
  }

  /**
   * A stream taken over from a replica that stopped before its end: its events numbered on from
   * those kept ({@code sent}), its progress on from the last progress among them.
   */
  static SseConnection continuing(
      String agent,
      String session,
      String stream,
      EventStore events,
      McpJsonMapper json,
      Sink sink,
      List<EventStore.Event> sent) {
    SseConnection connection = new SseConnection(agent, session, stream, events, json, sink);
    double progress = -1;
    for (EventStore.Event e : sent) {
      connection.seq = Math.max(connection.seq, e.seq());
      ProgressNotification p = connection.progressOf(e.message());
      if (p != null) {
        progress = Math.max(progress, p.progress());
      }
    }
    connection.progressOffset = progress + 1;
    return connection;
  }

  /** The progress a message carries, or null when it is none. */
  private ProgressNotification progressOf(String message) {
    try {
      return McpSchema.deserializeJsonRpcMessage(json, message)
              instanceof McpSchema.JSONRPCNotification n
          ? progressOf(n)
          : null;
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  private ProgressNotification progressOf(McpSchema.JSONRPCNotification n) {
    return n.method().equals(McpSchema.METHOD_NOTIFICATION_PROGRESS) && n.params() != null
        ? json.convertValue(n.params(), ProgressNotification.class)
        : null;
  }

  /**
   * Before a turn runs again: when the call asked for progress, one progress message saying so,
   * after which the turn's own progress counts on (docs/contract.md, "Progress").
   */
  void restarting(McpSchema.JSONRPCRequest call, String message) {
    Object token = null;
    try {
      token = json.convertValue(call.params(), McpSchema.CallToolRequest.class).progressToken();
    } catch (RuntimeException e) {
      // no progress asked for
    }
    if (token == null) {
      return;
    }
    double progress;
    lock.lock();
    try {
      progress = progressOffset;
      progressOffset++;
    } finally {
      lock.unlock();
    }
    sendAsIs(
        new McpSchema.JSONRPCNotification(
            McpSchema.JSONRPC_VERSION,
            McpSchema.METHOD_NOTIFICATION_PROGRESS,
            new ProgressNotification(token, progress, null, message, null)));
  }

  /** Answers the request with an SSE stream, open until the sink is completed. */
  static Sink open(HttpServletRequest request, HttpServletResponse response) throws IOException {
    response.setStatus(200);
    response.setContentType("text/event-stream");
    response.setCharacterEncoding("UTF-8");
    response.setHeader("Cache-Control", "no-cache");
    AsyncContext async = request.startAsync();
    async.setTimeout(0);
    return new Sink(async, response.getWriter());
  }

  /** Runs {@code end} once the stream's connection ends, however it ends. */
  static void whenEnded(AsyncContext async, Runnable end) {
    async.addListener(
        new AsyncListener() {
          @Override
          public void onComplete(AsyncEvent event) {
            end.run();
          }

          @Override
          public void onTimeout(AsyncEvent event) {
            end.run();
          }

          @Override
          public void onError(AsyncEvent event) {
            end.run();
          }

          @Override
          public void onStartAsync(AsyncEvent event) {}
        });
  }

  String session() {
    return session;
  }

  /** The priming event: an id to resume from, and how long to wait before reconnecting. */
  void prime(Duration retry) {
    lock.lock();
    try {
      if (sink != null
          && !write(
              sink,
              "id: " + eventId(stream, 0) + "\nretry: " + retry.toMillis() + "\ndata: \n\n")) {
        lost();
      }
    } finally {
      lock.unlock();
    }
  }

  static String eventId(String stream, long seq) {
    return stream + "_" + seq;
  }

  @Override
  public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
    return sendMessage(message, null);
  }

  @Override
  public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message, String messageId) {
    return Mono.fromRunnable(() -> send(message));
  }

  private void send(McpSchema.JSONRPCMessage message) {
    ProgressNotification p;
    if (progressOffset > 0
        && message instanceof McpSchema.JSONRPCNotification n
        && (p = progressOf(n)) != null) {
      // a turn run again counts its progress on from what the stream sent before
      message =
          new McpSchema.JSONRPCNotification(
              n.jsonrpc(),
              n.method(),
              new ProgressNotification(
                  p.progressToken(),
                  p.progress() + progressOffset,
                  p.total() == null ? null : p.total() + progressOffset,
                  p.message(),
                  p.meta()));
    }
    sendAsIs(message);
  }

  private void sendAsIs(McpSchema.JSONRPCMessage message) {
    String data;
    try {
      data = json.writeValueAsString(message);
    } catch (IOException e) {
      throw new IllegalStateException("a message of session " + session + " is not JSON", e);
    }
    lock.lock();
    try {
      if (closed) {
        LOG.debug("a message for session {} after its stream closed; dropped", session);
        return;
      }
      seq++;
      if (events != null) {
        events.append(
            agent,
            session,
            stream,
            new EventStore.Event(seq, data, message instanceof McpSchema.JSONRPCResponse));
      }
      if (sink != null && !write(sink, event(seq, data))) {
        if (events == null) {
          closeLocked();
          throw new IllegalStateException("the stream of session " + session + " is closed");
        }
        lost();
      }
    } finally {
      lock.unlock();
    }
  }

  private String event(long n, String data) {
    return "id: " + eventId(stream, n) + "\nevent: message\ndata: " + data + "\n\n";
  }

  private static boolean write(Sink sink, String text) {
    sink.writer().write(text);
    sink.writer().flush();
    return !sink.writer().checkError();
  }

  /** The client's connection broke: the stream goes on without it, kept for it to resume. */
  private void lost() {
    LOG.debug("the client of a stream of session {} is gone; the stream goes on", session);
    sink.complete();
    sink = null;
  }

  /** A client's connection to this stream ended, however it ended. */
  void ended(AsyncContext async) {
    lock.lock();
    try {
      if (sink != null && sink.async() == async) {
        sink = null;
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * A client resumes the stream after its event {@code after}: the events it missed, then the rest
   * as they come; a connection it still had is let go.
   */
  void resume(Sink next, long after) {
    lock.lock();
    try {
      List<EventStore.Event> missed =
          events == null
              ? List.of()
              : events.after(agent, session, stream, after).orElse(List.of());
      for (EventStore.Event e : missed) {
        if (!write(next, event(e.seq(), e.message()))) {
          next.complete();
          return;
        }
      }
      if (closed) {
        next.complete(); // it has all there was
        return;
      }
      if (sink != null) {
        sink.complete();
      }
      next.writer().flush(); // the client knows it is back on the stream before its next event
      sink = next;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public <T> T unmarshalFrom(Object data, TypeRef<T> type) {
    return json.convertValue(data, type);
  }

  @Override
  public Mono<Void> closeGracefully() {
    return Mono.fromRunnable(this::close);
  }

  /** The stream has ended (its request answered, or its session closed). */
  @Override
  public void close() {
    lock.lock();
    try {
      closeLocked();
    } finally {
      lock.unlock();
    }
  }

  private void closeLocked() {
    if (closed) {
      return;
    }
    closed = true;
    if (sink != null) {
      sink.complete();
      sink = null;
    }
  }
}
