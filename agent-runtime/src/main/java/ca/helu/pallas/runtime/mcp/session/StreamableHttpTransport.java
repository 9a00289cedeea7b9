package ca.helu.pallas.runtime.mcp.session;

import ca.helu.pallas.runtime.auth.Caller;
import ca.helu.pallas.runtime.http.EdgeSessions;
import ca.helu.pallas.runtime.store.EventStore;
import ca.helu.pallas.runtime.store.SessionStore;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import io.modelcontextprotocol.server.transport.ServerTransportSecurityException;
import io.modelcontextprotocol.server.transport.ServerTransportSecurityValidator;
import io.modelcontextprotocol.spec.HttpHeaders;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSession;
import io.modelcontextprotocol.spec.McpStreamableServerSession;
import io.modelcontextprotocol.spec.McpStreamableServerTransportProvider;
import io.modelcontextprotocol.spec.PallasSessionRestore;
import io.modelcontextprotocol.spec.ProtocolVersions;
import io.modelcontextprotocol.util.KeepAliveScheduler;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The Streamable HTTP transport of one agent's MCP server (MCP 2025-11-25, "Transports"; docs/
 * runtime.md, "Sessions"): POST, GET and DELETE on /mcp, served to the SDK's sessions. It is ours
 * rather than the SDK's servlet provider so that the session map is ours ({@link LiveSessions}:
 * counted, capped and expired in one place, without reflection into the SDK), and so that every
 * refusal it writes is a JSON-RPC error in our words, which the edge passes on as it is.
 *
 * <p>The edge ({@code http.McpEdgeFilter}) runs first: it has bounded and read the body, answered
 * the client notifications the agent does not act on, and holds room for a new session.
 */
public final class StreamableHttpTransport implements McpStreamableServerTransportProvider {
  private static final Logger LOG = LoggerFactory.getLogger(StreamableHttpTransport.class);
  private static final ObjectMapper ERRORS = new ObjectMapper();
  private static final String EVENT_STREAM = "text/event-stream";
  private static final String JSON = "application/json";
  private static final String CONTEXT_KEY = McpTransportContext.KEY;

  static final String NEEDS_SESSION =
      "Bad Request: this request needs the Mcp-Session-Id header from initialize";
  static final String NO_SUCH_SESSION = "Not Found: no such session; initialize a new one";
  static final String ACCEPT_POST =
      "Bad Request: the Accept header must list application/json and text/event-stream";
  static final String ACCEPT_GET = "Bad Request: the Accept header must list text/event-stream";
  static final String UNSOLICITED = "Invalid Request: this server awaits no response with this id";

  private final McpJsonMapper json;
  private final JsonSchemaValidator validator;
  private final ServerTransportSecurityValidator origins;
  private final Function<HttpServletRequest, McpTransportContext> context;
  private final LiveSessions sessions;

  /** The GET streams open now. */
  private final Set<SseConnection> listeners = ConcurrentHashMap.newKeySet();

  private final String agent;
  private final EventStore events;
  private final Resumption resumption;
  private final KeepAliveScheduler keepAlive;
  private volatile McpStreamableServerSession.Factory factory;
  private volatile boolean closing;

  /**
   * @param agent whose sessions these are (the store keeps every agent's)
   * @param validator the server's JSON-schema validator, for re-created sessions
   * @param origins which Origin headers are allowed (DNS-rebinding protection)
   * @param context what a request gives its handlers (the caller's bearer, its cancellation)
   * @param store where sessions are kept, for every replica of the agent
   * @param events where the events of resumable streams are kept, for every replica
   * @param follow how long a resumed stream that runs on no replica known here is followed in the
   *     event store (at most a turn's deadline)
   * @param maxSessions the sessions held at once ({@link LiveSessions})
   * @param idle how long an unused session is kept
   * @param keepAlive how often a client listening on a GET stream is pinged
   * @param expired told the id of each session closed for idleness or to make room
   */
  public StreamableHttpTransport(
      String agent,
      McpJsonMapper json,
      JsonSchemaValidator validator,
      ServerTransportSecurityValidator origins,
      Function<HttpServletRequest, McpTransportContext> context,
      SessionStore store,
      EventStore events,
      Duration follow,
      int maxSessions,
      Duration idle,
      Duration keepAlive,
      Consumer<String> expired) {
    this.json = json;
    this.agent = agent;
    this.events = events;
    this.resumption = new Resumption(agent, events, follow);
    this.validator = validator;
    this.origins = origins;
    this.context = context;
    this.sessions =
        new LiveSessions(
            agent,
            store,
            maxSessions,
            idle,
            id -> {
              events.forget(agent, id);
              expired.accept(id);
            });
    this.keepAlive =
        KeepAliveScheduler.builder(this::listening)
            .initialDelay(keepAlive)
            .interval(keepAlive)
            .onPingFailure(session -> {
              if (session instanceof McpStreamableServerSession streamable) {
                streamable.releaseListeningStream();
              }
            })
            .build();
    this.keepAlive.start();
  }

  /** The sessions, for the edge to keep the cap. */
  public EdgeSessions sessions() {
    return sessions;
  }

  /** Sessions held now. */
  public int sessionCount() {
    return sessions.count();
  }

  private Flux<McpSession> listening() {
    return closing
        ? Flux.empty()
        : Flux.fromIterable(sessions.sessions())
            .filter(McpStreamableServerSession::hasListeningStream)
            .cast(McpSession.class);
  }

  @Override
  public List<String> protocolVersions() {
    return List.of(
        ProtocolVersions.MCP_2025_03_26,
        ProtocolVersions.MCP_2025_06_18,
        ProtocolVersions.MCP_2025_11_25);
  }

  @Override
  public void setSessionFactory(McpStreamableServerSession.Factory factory) {
    this.factory = factory;
  }

  @Override
  public Mono<Void> notifyClients(String method, Object params) {
    return Flux.fromIterable(sessions.sessions())
        .flatMap(s ->
            s.sendNotification(method, params)
                .doOnError(e -> LOG.debug("notifying session {}: {}", s.getId(), e.toString()))
                .onErrorComplete())
        .then();
  }

  /**
   * A notification outside any call (a subscribed resource changed): sent on the session's GET
   * stream when its client listens on one here, else dropped, as MCP allows (2025-11-25,
   * "Transports", listening for messages from the server). Neither counts as a use of the session,
   * which stays subject to the idle limit, nor fetches one this process does not hold.
   *
   * <p>Each session's is written on a virtual thread of its own: a write to a stalled client blocks
   * until the connection's timeout, and must hold up neither the thread that saw the change (a
   * probe's, or a tool call's) nor the other subscribers.
   */
  @Override
  public Mono<Void> notifyClient(String sessionId, String method, Object params) {
    return Mono.fromRunnable(() -> {
      McpStreamableServerSession session = sessions.held(sessionId);
      if (session == null || !session.hasListeningStream()) {
        return;
      }
      Thread.ofVirtual()
          .name("pallas-notify-" + agent)
          .start(() -> {
            try {
              session.sendNotification(method, params).block();
            } catch (RuntimeException e) {
              // the stream closed meanwhile: the client's to reopen
              LOG.debug("notifying session {}: {}", sessionId, e.toString());
            }
          });
    });
  }

  @Override
  public Mono<Void> closeGracefully() {
    return Mono.fromRunnable(() -> {
      closing = true;
      keepAlive.shutdown();
      sessions.close();
      for (McpStreamableServerSession session : sessions.clear()) {
        try {
          session.closeGracefully().block(Duration.ofSeconds(5));
        } catch (RuntimeException e) {
          LOG.debug("closing session {}: {}", session.getId(), e.toString());
        }
      }
    });
  }

  /** Serves one request to /mcp. */
  public void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
    if (closing) {
      refuse(response, 503, -32000, "Service Unavailable: this server is shutting down");
      return;
    }
    try {
      origins.validateHeaders(headers(request));
    } catch (ServerTransportSecurityException e) {
      refuse(
          response,
          e.getStatusCode(),
          McpSchema.ErrorCodes.INVALID_REQUEST,
          "Forbidden: requests from this Origin are not allowed (docs/configuration.md, --allowed-origin)");
      return;
    }
    switch (request.getMethod()) {
      case "POST" -> post(request, response);
      case "GET" -> get(request, response);
      case "DELETE" -> delete(request, response);
      default -> refuse(response, 405, McpSchema.ErrorCodes.INVALID_REQUEST, "Method Not Allowed");
    }
  }

  private static Map<String, List<String>> headers(HttpServletRequest request) {
    Map<String, List<String>> headers = new HashMap<>();
    for (String name : Collections.list(request.getHeaderNames())) {
      headers.put(name, Collections.list(request.getHeaders(name)));
    }
    return headers;
  }

  private void post(HttpServletRequest request, HttpServletResponse response) throws IOException {
    String accept = request.getHeader("Accept");
    if (accept == null || !accept.contains(EVENT_STREAM) || !accept.contains(JSON)) {
      refuse(response, 400, McpSchema.ErrorCodes.INVALID_REQUEST, ACCEPT_POST);
      return;
    }
    if (!isJson(request.getContentType())) {
      refuse(
          response,
          415,
          McpSchema.ErrorCodes.INVALID_REQUEST,
          "Unsupported Media Type: Content-Type must be application/json");
      return;
    }
    McpSchema.JSONRPCMessage message;
    String body;
    try {
      body = new String(request.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      message = McpSchema.deserializeJsonRpcMessage(json, body);
    } catch (IOException | IllegalArgumentException e) {
      LOG.debug("not a JSON-RPC message: {}", e.toString());
      refuse(
          response,
          400,
          McpSchema.ErrorCodes.INVALID_REQUEST,
          "Bad Request: not a valid MCP request");
      return;
    }
    if (message instanceof McpSchema.JSONRPCRequest r && r.method().equals("initialize")) {
      initialize(request, response, r);
      return;
    }
    McpStreamableServerSession session = session(request, response);
    if (session == null) {
      return;
    }
    String id = session.getId();
    McpTransportContext transportContext = context.apply(request);
    try {
      switch (message) {
        case McpSchema.JSONRPCResponse answer -> {
          try {
            session.accept(answer).contextWrite(c -> c.put(CONTEXT_KEY, transportContext)).block();
          } catch (RuntimeException e) {
            // a response to no request of ours: the client's mistake, not our fault
            LOG.debug("a response no request of session {} awaits: {}", id, e.toString());
            refuse(response, 400, McpSchema.ErrorCodes.INVALID_REQUEST, UNSOLICITED);
            return;
          }
          accepted(response);
        }
        case McpSchema.JSONRPCNotification notification -> {
          session
              .accept(notification)
              .contextWrite(c -> c.put(CONTEXT_KEY, transportContext))
              .block();
          accepted(response);
        }
        case McpSchema.JSONRPCRequest call ->
            respond(request, response, session, call, body, transportContext);
        default ->
            refuse(
                response,
                400,
                McpSchema.ErrorCodes.INVALID_REQUEST,
                "Bad Request: not a valid MCP request");
      }
    } finally {
      sessions.used(id);
    }
  }

  /**
   * The session the request's Mcp-Session-Id names, held here or re-created from the store; null
   * when the header is missing or there is no such session (then the client has been answered).
   */
  private McpStreamableServerSession session(
      HttpServletRequest request, HttpServletResponse response) throws IOException {
    String id = request.getHeader(HttpHeaders.MCP_SESSION_ID);
    if (id == null || id.isBlank()) {
      refuse(response, 400, McpSchema.ErrorCodes.INVALID_REQUEST, NEEDS_SESSION);
      return null;
    }
    McpStreamableServerSession session;
    try {
      session = sessions.use(id, this::restore);
    } catch (LiveSessions.Full e) {
      response.setHeader("Retry-After", "1");
      refuse(response, 503, -32000, e.getMessage());
      return null;
    } catch (RuntimeException e) {
      // a stored session this server cannot read: to the client it is gone
      LOG.warn("re-creating MCP session {} failed: {}", id, e.toString());
      session = null;
    }
    if (session == null) {
      refuse(response, 404, McpSchema.ErrorCodes.INVALID_REQUEST, NO_SUCH_SESSION);
    }
    return session;
  }

  /** A session another replica (or this process before a restart) opened, re-created here. */
  private McpStreamableServerSession restore(SessionStore.StoredSession stored) {
    McpSchema.InitializeRequest init;
    try {
      init = json.readValue(stored.initialize(), McpSchema.InitializeRequest.class);
    } catch (IOException e) {
      throw new IllegalStateException("the stored initialize request is not readable", e);
    }
    return PallasSessionRestore.restore(factory, stored.id(), init, validator);
  }

  private static void accepted(HttpServletResponse response) {
    response.setStatus(202);
    response.setContentLength(0);
  }

  private static boolean isJson(String contentType) {
    if (contentType == null) {
      return false;
    }
    int parameters = contentType.indexOf(';');
    String type = parameters < 0 ? contentType : contentType.substring(0, parameters);
    return type.strip().equalsIgnoreCase(JSON);
  }

  private void initialize(
      HttpServletRequest request, HttpServletResponse response, McpSchema.JSONRPCRequest call)
      throws IOException {
    McpSchema.InitializeRequest init =
        json.convertValue(call.params(), new TypeRef<McpSchema.InitializeRequest>() {});
    McpStreamableServerSession.McpStreamableServerSessionInit started = factory.startSession(init);
    McpStreamableServerSession session = started.session();
    McpSchema.InitializeResult result;
    try {
      result = started.initResult().block();
    } catch (RuntimeException e) {
      LOG.warn("initializing a session failed: {}", e.toString());
      refuse(response, 500, McpSchema.ErrorCodes.INTERNAL_ERROR, "Internal error");
      return;
    }
    sessions.add(
        session,
        request.getRemoteAddr(),
        Caller.nameOf(request),
        json.writeValueAsString(init),
        result.protocolVersion());
    response.setHeader(HttpHeaders.MCP_SESSION_ID, session.getId());
    JsonAnswer.write(response, json, McpSchema.JSONRPCResponse.result(call.id(), result));
  }

  /**
   * Whether a session's streams are resumable: opened with protocol 2025-11-25 or later, whose
   * clients know the priming event (docs/contract.md, "Streams"). Its calls are not stopped when
   * the client's connection breaks; it comes back for the rest.
   */
  public boolean resumable(String session) {
    return sessions.protocolVersion(session).compareTo(ProtocolVersions.MCP_2025_11_25) >= 0;
  }

  /**
   * A request of the client's. A tool call is answered on an SSE stream of its own, with what the
   * call sends (its progress, its calls' notifications); on a resumable stream it is kept in the
   * event store first, so that another replica runs it again should this one die before it ends
   * ({@link #rerun}). Any other request sends nothing before its response, which is answered as one
   * JSON object ({@link JsonAnswer}).
   */
  private void respond(
      HttpServletRequest request,
      HttpServletResponse response,
      McpStreamableServerSession session,
      McpSchema.JSONRPCRequest call,
      String body,
      McpTransportContext transportContext)
      throws IOException {
    String id = session.getId();
    if (!call.method().equals(McpSchema.METHOD_TOOLS_CALL)) {
      answer(response, session, call, transportContext);
      return;
    }
    boolean resumable = resumable(id);
    SseConnection.Sink sink = SseConnection.open(request, response);
    String streamId = newStreamId();
    SseConnection connection =
        new SseConnection(agent, id, streamId, resumable ? events : null, json, sink);
    if (resumable) {
      events.started(agent, id, streamId, body);
      connection.prime(RETRY);
    }
    handle(session, call, streamId, connection, sink, resumable, transportContext);
  }

  private void answer(
      HttpServletResponse response,
      McpStreamableServerSession session,
      McpSchema.JSONRPCRequest call,
      McpTransportContext transportContext)
      throws IOException {
    JsonAnswer answer = new JsonAnswer(json, session.getId());
    try {
      session
          .responseStream(answer)
          .handle(call)
          .contextWrite(c -> c.put(CONTEXT_KEY, transportContext))
          .block();
    } catch (RuntimeException e) {
      LOG.debug("a request of session {} ended: {}", session.getId(), e.toString());
    }
    if (!answer.write(response)) {
      refuse(response, 500, McpSchema.ErrorCodes.INTERNAL_ERROR, "Internal error");
    }
  }

  /**
   * A tool call whose replica died before its stream's end, run again here for the client that
   * resumed the stream (docs/runtime.md, "Sessions"): on the same stream, its events numbered on
   * from the last one kept, and its progress on from the last progress sent, after one progress
   * message that says the turn starts again. The turn had stored nothing (a turn is appended to its
   * history whole, at its end), so the conversation holds it once; what its tools did before the
   * replica died, they may do again.
   */
  private void rerun(
      McpStreamableServerSession session,
      String streamId,
      EventStore.Orphan orphan,
      List<EventStore.Event> sent,
      SseConnection.Sink sink,
      McpTransportContext transportContext) {
    McpSchema.JSONRPCRequest call;
    try {
      call = (McpSchema.JSONRPCRequest) McpSchema.deserializeJsonRpcMessage(json, orphan.request());
    } catch (IOException | RuntimeException e) {
      LOG.warn("a kept request of session {} is not readable: {}", session.getId(), e.toString());
      sink.complete();
      return;
    }
    SseConnection connection =
        SseConnection.continuing(agent, session.getId(), streamId, events, json, sink, sent);
    LOG.info(
        "running again a call of session {} whose replica stopped before it ended",
        session.getId());
    connection.restarting(call, agent + ": its replica stopped; the turn starts again");
    handle(session, call, streamId, connection, sink, true, transportContext);
    sessions.used(session.getId());
  }

  private void handle(
      McpStreamableServerSession session,
      McpSchema.JSONRPCRequest call,
      String streamId,
      SseConnection connection,
      SseConnection.Sink sink,
      boolean resumable,
      McpTransportContext transportContext) {
    McpStreamableServerSession.McpStreamableServerSessionStream stream =
        session.responseStream(connection);
    if (resumable) {
      resumption.running(streamId, connection);
      SseConnection.whenEnded(sink.async(), () -> connection.ended(sink.async()));
    } else {
      SseConnection.whenEnded(sink.async(), stream::releaseTransport);
    }
    try {
      stream.handle(call).contextWrite(c -> c.put(CONTEXT_KEY, transportContext)).block();
    } catch (RuntimeException e) {
      LOG.debug("the stream of a request of session {} ended: {}", session.getId(), e.toString());
      connection.close();
    } finally {
      resumption.ended(streamId);
    }
  }

  /** How long a client waits before it reconnects to a stream the server ended. */
  static final Duration RETRY = Duration.ofSeconds(1);

  private static String newStreamId() {
    return UUID.randomUUID().toString().replace("-", "");
  }

  private void get(HttpServletRequest request, HttpServletResponse response) throws IOException {
    String accept = request.getHeader("Accept");
    if (accept == null || !accept.contains(EVENT_STREAM)) {
      refuse(response, 400, McpSchema.ErrorCodes.INVALID_REQUEST, ACCEPT_GET);
      return;
    }
    McpStreamableServerSession session = session(request, response);
    if (session == null) {
      return;
    }
    String id = session.getId();
    String lastEventId = request.getHeader("Last-Event-ID");
    McpTransportContext transportContext = context.apply(request);
    if (lastEventId != null
        && resumption.resume(
            request,
            response,
            id,
            lastEventId,
            (stream, orphan, sent, sink) ->
                rerun(session, stream, orphan, sent, sink, transportContext))) {
      return;
    }
    SseConnection.Sink sink = SseConnection.open(request, response);
    response.flushBuffer(); // the client knows its stream is open before any message
    SseConnection connection = new SseConnection(agent, id, newStreamId(), null, json, sink);
    McpStreamableServerSession.McpStreamableServerSessionStream listening =
        session.listeningStream(connection);
    listeners.add(connection);
    SseConnection.whenEnded(
        sink.async(),
        () -> {
          listeners.remove(connection);
          listening.releaseTransport();
        });
  }

  /**
   * Ends every GET stream a client listens on: a replica that drains while serving (DrainMode
   * SERVE) closes every connection it holds, and a listening client reconnects through the Service
   * to a ready replica (docs/runtime.md, "Errors callers see").
   */
  public void endListeningStreams() {
    listeners.forEach(SseConnection::close);
  }

  private void delete(HttpServletRequest request, HttpServletResponse response) throws IOException {
    McpStreamableServerSession session = session(request, response);
    if (session == null) {
      return;
    }
    String id = session.getId();
    sessions.remove(id);
    events.forget(agent, id);
    session
        .delete()
        .contextWrite(c -> c.put(CONTEXT_KEY, context.apply(request)))
        .onErrorResume(e -> {
          LOG.debug("closing deleted session {}: {}", id, e.toString());
          return Mono.empty();
        })
        .block(Duration.ofSeconds(5));
    response.setStatus(200);
    response.setContentLength(0);
  }

  /** A JSON-RPC error without an id (the edge gives it the request's). */
  private static void refuse(HttpServletResponse response, int status, int code, String message)
      throws IOException {
    ObjectNode error = ERRORS.createObjectNode();
    error.put("jsonrpc", "2.0");
    error.putNull("id");
    error.putObject("error").put("code", code).put("message", message);
    response.setStatus(status);
    response.setContentType(JSON);
    response.setCharacterEncoding("UTF-8");
    response.getWriter().write(ERRORS.writeValueAsString(error));
    response.getWriter().flush();
  }
}
