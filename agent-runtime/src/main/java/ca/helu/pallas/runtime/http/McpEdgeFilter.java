package ca.helu.pallas.runtime.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelcontextprotocol.spec.ProtocolVersions;
import io.undertow.server.HttpServerExchange;
import io.undertow.servlet.handlers.ServletRequestContext;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.xnio.IoUtils;

/**
 * The MCP endpoint's edge (docs/runtime.md, "Errors callers see"): every refusal leaves as a
 * JSON-RPC error object with the request's id and a message of ours, never the transport's
 * serialized exception (class names, stack frames, library messages). Methods other than POST, GET
 * and DELETE get 405 without an echo (TRACE included). A POST body the transport could not answer
 * properly ({@link McpEnvelope}) is refused here, with -32700, -32600 or -32602; a client
 * notification the agent does not act on is accepted here (202). The bounds of {@link EdgeLimits}
 * (sessions, concurrent requests, body bytes held, and the connections kept for health) are kept
 * here too, and a request body's share of them is given back however its request ends.
 */
public final class McpEdgeFilter implements Filter {
  private static final Logger LOG = LoggerFactory.getLogger(McpEdgeFilter.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Set<String> METHODS = Set.of("POST", "GET", "DELETE");

  /** The versions the MCP SDK speaks (the header is checked as the specification requires). */
  static final List<String> PROTOCOL_VERSIONS =
      List.of(
          ProtocolVersions.MCP_2024_11_05,
          ProtocolVersions.MCP_2025_03_26,
          ProtocolVersions.MCP_2025_06_18,
          ProtocolVersions.MCP_2025_11_25);

  /** RFC 6750's b64token: what a bearer token may hold, so it travels byte for byte. */
  private static final Pattern BEARER_TOKEN = Pattern.compile("[A-Za-z0-9._~+/-]+=*");

  static final int INVALID_REQUEST = McpEnvelope.INVALID_REQUEST;
  static final int INTERNAL_ERROR = -32603;

  private static final ScheduledThreadPoolExecutor DEADLINES = deadlines();

  /**
   * One thread closing the connections whose body is late; a deadline met is removed at once, not
   * kept (with its exchange) until its time would have come.
   */
  private static ScheduledThreadPoolExecutor deadlines() {
    ScheduledThreadPoolExecutor deadlines =
        new ScheduledThreadPoolExecutor(
            1, Thread.ofPlatform().daemon().name("pallas-body-deadline").factory());
    deadlines.setRemoveOnCancelPolicy(true);
    return deadlines;
  }

  /** JSON-RPC's implementation-defined server error: this server is shutting down. */
  static final int SHUTTING_DOWN = -32000;

  /** The same code for a bound of {@link EdgeLimits} reached: retry later. */
  static final int UNAVAILABLE = -32000;

  static final String UNSOLICITED = "Invalid Request: this server awaits no response with this id";

  /**
   * What the edge does while the server drains (docs/runtime.md, "Errors callers see"): every
   * response closes its connection, so a client's next request opens a new one, which a Kubernetes
   * Service routes to a ready replica (this one left the endpoints before its drain began). With
   * {@code handOverSessions} (agent pods, `serve --cluster`) a new call on an existing session is
   * answered 404, the specification's "session gone", which makes MCP clients initialize a new
   * session (Daedalus does), and a new initialize is answered 503: no call is refused with an error
   * the client cannot recover from. Without it (one local process, no other replica) a new call
   * gets the tool error "shutting down; retry" (TurnHandler).
   *
   * @param active whether the server is draining
   */
  public record Drain(BooleanSupplier active, boolean handOverSessions) {
    public static final Drain NEVER = new Drain(() -> false, false);
  }

  /** The agent's MCP sessions, as the edge needs them. */
  public interface Sessions {
    Sessions UNBOUNDED =
        new Sessions() {
          @Override
          public boolean reserve(String caller) {
            return true;
          }

          @Override
          public void release() {}

          @Override
          public boolean known(String session) {
            return true;
          }
        };

    /**
     * Holds room for a session being initialized by {@code caller} (its address), making room at
     * the cap by closing the oldest idle session, the caller's own first; false when every session
     * is busy.
     */
    boolean reserve(String caller);

    /** The initialize that reserved room has been answered (its session counts by itself). */
    void release();

    /** Whether this session is open. */
    boolean known(String session);
  }

  private final Duration bodyTimeout;
  private final Drain drain;
  private final RequestPool pool;
  private final EdgeLimits limits;
  private final Sessions sessions;
  private final ConnectionCap connections;
  private final CallCancels calls;
  private final ObjectMapper json;
  private final String tooLarge;

  /**
   * @param bodyTimeout how long a POST body may take to arrive before the connection closes
   * @param drain what to do with requests while the server drains
   * @param pool the requests and body bytes the process holds at once
   * @param sessions the sessions counted against {@code limits.maxSessions()}
   * @param connections the listener's connections: in its reserve only health requests pass
   * @param calls the calls in flight that notifications/cancelled stops
   */
  McpEdgeFilter(
      Duration bodyTimeout,
      Drain drain,
      RequestPool pool,
      Sessions sessions,
      ConnectionCap connections,
      CallCancels calls) {
    this.bodyTimeout = bodyTimeout;
    this.drain = drain;
    this.pool = pool;
    this.limits = pool.limits();
    this.sessions = sessions;
    this.connections = connections;
    this.calls = calls;
    this.json = new ObjectMapper(limits.jsonFactory());
    this.tooLarge = tooLarge(limits.maxBodyBytes());
  }

  /** The error for a body over the limit, naming it. */
  static String tooLarge(long maxBodyBytes) {
    return "Payload Too Large: a request body may hold at most "
        + EdgeLimits.mib(maxBodyBytes)
        + " (derived from this agent's memory; docs/runtime.md, Memory)";
  }

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    HttpServletRequest request = (HttpServletRequest) req;
    HttpServletResponse response = (HttpServletResponse) res;
    String method = request.getMethod();
    // draining, each response closes its connection so that the client's next one goes to a ready
    // replica; in the connections' reserve, so that the reserve turns over. Set on the exchange:
    // a Connection header would be overwritten by the SDK's event streams, which say keep-alive
    boolean healthOnly = connections.healthOnly();
    if (drain.active().getAsBoolean() || healthOnly) {
      ServletRequestContext.requireCurrent().getExchange().setPersistent(false);
    }
    if (!METHODS.contains(method)) {
      response.setHeader("Allow", "GET, POST, DELETE");
      refuse(
          response,
          405,
          NullNode.instance,
          INVALID_REQUEST,
          "HTTP method " + safe(method) + " is not allowed here: use POST, GET or DELETE");
      return;
    }
    String version = request.getHeader("MCP-Protocol-Version");
    if (version != null && !PROTOCOL_VERSIONS.contains(version)) {
      refuse(
          response,
          400,
          NullNode.instance,
          INVALID_REQUEST,
          "Bad Request: unsupported MCP-Protocol-Version;"
              + " supported: "
              + String.join(", ", PROTOCOL_VERSIONS));
      return;
    }
    String bearer = bearerProblem(request.getHeader("Authorization"));
    if (bearer != null) {
      refuse(response, 400, NullNode.instance, INVALID_REQUEST, bearer);
      return;
    }
    if (!method.equals("POST")) {
      if (healthOnly) {
        unavailable(response, NullNode.instance, connections.refusal());
        return;
      }
      pass(request, response, chain, NullNode.instance, false);
      return;
    }
    long declared = request.getContentLengthLong();
    if (declared > limits.maxBodyBytes()) {
      refuse(response, 413, NullNode.instance, INVALID_REQUEST, tooLarge);
      return;
    }
    // a body is held from its first byte until its request is answered (the SDK parses it, and a
    // call's turn runs, inside chain.doFilter), and its share given back however that ends: an
    // error while reading (an OutOfMemoryError among them) included
    Body body = new Body();
    try {
      if (body.read(request, response, declared)) {
        post(request, response, chain, body, healthOnly);
      }
    } finally {
      body.release();
    }
  }

  /**
   * Why an Authorization header's bearer token cannot be taken as it is, or null: a token is
   * forwarded byte for byte or not at all (docs/contract.md, "Bearer forwarding"), and HTTP headers
   * carry non-ASCII bytes only as something else. Other schemes are not ours to judge.
   */
  static String bearerProblem(String authorization) {
    if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
      return null;
    }
    String token = authorization.substring(7).strip();
    if (token.isEmpty() || BEARER_TOKEN.matcher(token).matches()) {
      return null;
    }
    return "Bad Request: the bearer token in the Authorization header has characters a bearer"
        + " token cannot hold (RFC 6750: letters, digits, - . _ ~ + / and a trailing =);"
        + " it is refused rather than altered";
  }

  /**
   * A POST whose body has arrived: refused here, accepted here (a notification the agent does not
   * act on), or passed on to the transport. With {@code healthOnly} (the connections' reserve in
   * use) only ping and get_health pass.
   */
  private void post(
      HttpServletRequest request,
      HttpServletResponse response,
      FilterChain chain,
      Body body,
      boolean healthOnly)
      throws IOException, ServletException {
    if (body.length() > limits.maxBodyBytes()) {
      response.setHeader("Connection", "close"); // the rest of the body is not read
      refuse(response, 413, NullNode.instance, INVALID_REQUEST, tooLarge);
      return;
    }
    McpEnvelope envelope = McpEnvelope.read(json, body.bytes, body.length());
    JsonNode id = envelope.id();
    if (envelope.problem() != null) {
      refuse(response, 400, id, envelope.code(), envelope.problem());
      return;
    }
    String session = request.getHeader("Mcp-Session-Id");
    if (envelope.isResponse() && !answersThisServer(id, session)) {
      // the SDK would log an ERROR for it: a client's mistake, refused quietly here
      refuse(response, 400, id, INVALID_REQUEST, UNSOLICITED);
      return;
    }
    if (envelope.isNotification() && !envelope.method().equals("notifications/initialized")) {
      accept(response, envelope, session);
      return;
    }
    boolean draining = drain.active().getAsBoolean();
    Refusal handOver = draining && drain.handOverSessions() ? handOver(request, envelope) : null;
    if (handOver != null) {
      if (handOver.status() == 503) {
        response.setHeader("Retry-After", "1");
      }
      refuse(response, handOver.status(), id, SHUTTING_DOWN, handOver.message());
      return;
    }
    String rpcMethod = envelope.method();
    boolean answeredWhenBusy = answeredWhenBusy(rpcMethod, envelope.tool());
    if (healthOnly && !answeredWhenBusy) {
      unavailable(response, id, connections.refusal());
      return;
    }
    if (envelope.hasId()) {
      CancelNotifications.noteId(request, id);
    }
    HttpServletRequest cached = new CachedBody(request, body);
    if (rpcMethod.equals("initialize")) {
      if (!sessions.reserve(request.getRemoteAddr())) {
        unavailable(
            response,
            id,
            "Service Unavailable: this agent holds its maximum of "
                + limits.maxSessions()
                + " sessions, each of them busy; retry later, and end (DELETE) sessions no"
                + " longer used");
        return;
      }
      try {
        pass(cached, response, chain, id, false);
      } finally {
        sessions.release();
      }
    } else if (envelope.hasId() && !envelope.isResponse() && !answeredWhenBusy) {
      if (!pool.tryRequest()) {
        unavailable(
            response,
            id,
            "Service Unavailable: this agent is answering its maximum of "
                + limits.maxConcurrentRequests()
                + " concurrent requests; retry shortly");
        return;
      }
      try {
        pass(cached, response, chain, id, false);
      } finally {
        pool.releaseRequest();
      }
    } else {
      pass(cached, response, chain, id, envelope.isResponse());
    }
  }

  /**
   * A client notification other than notifications/initialized: the agent acts on none of them
   * (roots, progress and the like), so it is accepted here, 202 with no body as the transport
   * specification says, on a session that exists, without reaching the SDK (which would ask the
   * client for its roots, or log the whole notification).
   */
  private void accept(HttpServletResponse response, McpEnvelope envelope, String session)
      throws IOException {
    if (session == null || session.isBlank()) {
      refuse(
          response,
          400,
          NullNode.instance,
          INVALID_REQUEST,
          "Bad Request: this request needs the Mcp-Session-Id header from initialize");
      return;
    }
    if (!sessions.known(session)) {
      refuse(response, 404, NullNode.instance, INVALID_REQUEST, messageFor(404, ""));
      return;
    }
    if (envelope.method().equals(CancelNotifications.METHOD)) {
      CancelNotifications.cancel(calls, session, envelope.cancelled());
    } else {
      LOG.debug("accepted the client notification {}", safe(envelope.method()));
    }
    response.setStatus(202);
    response.setContentLength(0);
  }

  /** Hands a request to the transport, turning any error it writes into one of ours. */
  private void pass(
      HttpServletRequest request,
      HttpServletResponse response,
      FilterChain chain,
      JsonNode id,
      boolean isResponse)
      throws IOException, ServletException {
    ErrorCapture capture = new ErrorCapture(response);
    chain.doFilter(request, capture);
    if (capture.status >= 500 && isResponse) {
      // the SDK fails on a response to a request it never sent: the client's mistake
      refuse(response, 400, id, INVALID_REQUEST, UNSOLICITED);
      return;
    }
    if (capture.status >= 500 && drain.active().getAsBoolean()) {
      // the transport closes with the server: a retry belongs on another replica
      response.setHeader("Retry-After", "1");
      refuse(response, 503, id, SHUTTING_DOWN, "Service Unavailable: this server is shutting down");
      return;
    }
    if (capture.status == 503) {
      // a bound of the transport's (sessions at the cap, each busy): retry later
      refuse(response, 503, id, UNAVAILABLE, messageFor(503, capture.body()));
      return;
    }
    if (capture.status >= 400) {
      int status = capture.status >= 500 ? 500 : capture.status;
      refuse(
          response,
          status,
          id,
          status >= 500 ? INTERNAL_ERROR : INVALID_REQUEST,
          messageFor(status, capture.body()));
    }
  }

  /**
   * Calls kept out of the request limit and answered from the connections' reserve, so a busy or
   * crowded agent still tells how it is.
   */
  private static boolean answeredWhenBusy(String method, String tool) {
    return method.equals("ping") || method.equals("tools/call") && "get_health".equals(tool);
  }

  /**
   * Whether a response's id is one this server gives its requests (keep-alive pings): the SDK
   * numbers them {@code <session id>-<n>}.
   */
  private static boolean answersThisServer(JsonNode id, String session) {
    return session != null
        && id.isTextual()
        && id.asText().startsWith(session + "-")
        && id.asText().substring(session.length() + 1).chars().allMatch(Character::isDigit);
  }

  private String bodiesHeld() {
    return "Service Unavailable: request bodies being received and answered hold the limit of "
        + EdgeLimits.mib(limits.maxBodyBytesHeld())
        + " at once; retry shortly";
  }

  /**
   * One request's body: its bytes, until the transport has read them (then only the transport's
   * copy is kept, docs/runtime.md, "Memory"), and its share of the bytes held at once, until {@link
   * #release()}.
   */
  private final class Body {
    private byte[] bytes;
    private int length;
    private int held;

    /**
     * Reads the body, holding its bytes against the limit: true when it is here; false when it was
     * refused here (answered) or the connection is gone (nobody to answer).
     */
    boolean read(HttpServletRequest request, HttpServletResponse response, long declared)
        throws IOException {
      if (declared > 0) {
        // a body with Content-Length counts in full from its first byte
        if (!pool.tryBodyBytes((int) declared)) {
          response.setHeader("Connection", "close"); // the body is not read
          unavailable(response, NullNode.instance, bodiesHeld());
          return false;
        }
        held = (int) declared;
        byte[] into;
        try {
          into = new byte[(int) declared];
        } catch (OutOfMemoryError e) {
          // only with limits set past what the heap holds (the derived ones fit it): this body
          // is refused, and the heap, which had no room for it, is as it was
          LOG.warn("no heap for a request body of {} bytes; refused", declared);
          response.setHeader("Connection", "close"); // the body is not read
          unavailable(
              response,
              NullNode.instance,
              "Service Unavailable: this agent has no memory for a body of "
                  + EdgeLimits.mib(declared)
                  + " now; retry shortly");
          return false;
        }
        return readKnown(request, into);
      }
      return readUnknown(request, response);
    }

    private boolean readKnown(HttpServletRequest request, byte[] into) {
      ScheduledFuture<?> deadline = closeAfterBodyTimeout();
      try {
        length = request.getInputStream().readNBytes(into, 0, into.length);
        bytes = into;
        return true;
      } catch (IOException | RuntimeException e) {
        // a connection gone mid-body; Undertow's stream throws NullPointerException, not an
        // IOException, when the body deadline closes the connection under a read
        LOG.debug("request body not read: {}", e.toString());
        return false;
      } finally {
        deadline.cancel(false);
      }
    }

    /**
     * A body of unknown length (chunked), held piece by piece as it arrives and read up to past the
     * body limit; false when the connection is gone, or when the bytes held would pass their limit
     * (then refused here).
     */
    private boolean readUnknown(HttpServletRequest request, HttpServletResponse response)
        throws IOException {
      ScheduledFuture<?> deadline = closeAfterBodyTimeout();
      ByteArrayOutputStream body = new ByteArrayOutputStream();
      byte[] piece = new byte[64 * 1024];
      try {
        InputStream in = request.getInputStream();
        int n;
        while (body.size() <= limits.maxBodyBytes() && (n = in.read(piece)) != -1) {
          if (!pool.tryBodyBytes(n)) {
            response.setHeader("Connection", "close"); // the rest of the body is not read
            unavailable(response, NullNode.instance, bodiesHeld());
            return false;
          }
          held += n;
          body.write(piece, 0, n);
        }
      } catch (IOException | RuntimeException e) {
        // a connection gone mid-body; Undertow's stream throws NullPointerException, not an
        // IOException, when the body deadline closes the connection under a read
        LOG.debug("request body not read: {}", e.toString());
        return false;
      } finally {
        deadline.cancel(false);
      }
      bytes = body.toByteArray();
      length = bytes.length;
      return true;
    }

    int length() {
      return length;
    }

    /** The bytes for the transport, once: afterwards this body no longer holds them. */
    byte[] take() {
      byte[] taken = bytes;
      bytes = null;
      return taken;
    }

    /** Gives the body's share of the bytes held back, once. */
    void release() {
      pool.releaseBodyBytes(held);
      held = 0;
      bytes = null;
    }
  }

  /** A body that does not arrive in time (a stalled or trickling upload) loses its connection. */
  private ScheduledFuture<?> closeAfterBodyTimeout() {
    HttpServerExchange exchange = ServletRequestContext.requireCurrent().getExchange();
    return DEADLINES.schedule(
        () -> {
          LOG.debug("closing a connection whose request body took over {}", bodyTimeout);
          IoUtils.safeClose(exchange.getConnection());
        },
        bodyTimeout.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  /** 503 with Retry-After: a bound of {@link EdgeLimits} is reached for now. */
  private static void unavailable(HttpServletResponse response, JsonNode id, String message)
      throws IOException {
    response.setHeader("Retry-After", "1");
    refuse(response, 503, id, UNAVAILABLE, message);
  }

  private record Refusal(int status, String message) {}

  /**
   * While draining with hand-over: how this request is sent to another replica, or null for one
   * this server still answers (notifications, responses, requests outside a session's calls).
   */
  private static Refusal handOver(HttpServletRequest request, McpEnvelope envelope) {
    if (!envelope.hasId() || envelope.isResponse()) {
      return null;
    }
    if (envelope.method().equals("initialize")) {
      return new Refusal(
          503,
          "Service Unavailable: this replica is shutting down; retry, and the Service routes"
              + " the new connection to a ready one");
    }
    if (request.getHeader("Mcp-Session-Id") != null) {
      return new Refusal(
          404,
          "Not Found: this replica is shutting down and its sessions end with it;"
              + " initialize a new session");
    }
    return null;
  }

  /**
   * The words for what the transport refused: its own (it is ours, and writes a JSON-RPC error in
   * words meant for callers), else a plain one for the status; never the words of a server error.
   */
  static String messageFor(int status, String transportBody) {
    String said = "";
    try {
      said = JSON.readTree(transportBody).path("error").path("message").asText("");
    } catch (IOException | RuntimeException e) {
      // not the transport's JSON (e.g. a container error page)
    }
    if (!said.isEmpty() && (status < 500 || status == 503)) {
      return said;
    }
    return switch (status) {
      case 404 -> "Not Found: no such session; initialize a new one";
      case 405 -> "Method Not Allowed";
      case 413 -> "Payload Too Large";
      default -> status >= 500 ? "Internal error" : "Request refused (HTTP " + status + ")";
    };
  }

  private static void refuse(
      HttpServletResponse response, int status, JsonNode id, int code, String message)
      throws IOException {
    if (status == 500) {
      LOG.warn("MCP transport failed a request: {}", message);
    } else {
      LOG.debug("refused an MCP request ({}): {}", status, message);
    }
    ObjectNode error = JsonNodeFactory.instance.objectNode();
    error.put("jsonrpc", "2.0");
    error.set("id", id);
    error.putObject("error").put("code", code).put("message", message);
    byte[] body = JSON.writeValueAsBytes(error);
    response.resetBuffer();
    response.setStatus(status);
    response.setContentType("application/json");
    response.setCharacterEncoding("UTF-8");
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
    response.getOutputStream().flush();
  }

  /** A method name from the client, for a message: bounded and plain, or "(unusual)". */
  private static String safe(String method) {
    return method.length() > 64
            || !method.chars().allMatch(c -> Character.isLetter(c) || c == '/' || c == '_')
        ? "(unusual)"
        : method;
  }

  /** The request with its body already read: the transport takes the bytes from the edge. */
  private static final class CachedBody extends HttpServletRequestWrapper {
    private final Body body;

    CachedBody(HttpServletRequest request, Body body) {
      super(request);
      this.body = body;
    }

    @Override
    public ServletInputStream getInputStream() {
      int length = body.length();
      byte[] bytes = body.take();
      ByteArrayInputStream in =
          bytes == null
              ? new ByteArrayInputStream(new byte[0])
              : new ByteArrayInputStream(bytes, 0, length);
      return new ServletInputStream() {
        @Override
        public boolean isFinished() {
          return in.available() == 0;
        }

        @Override
        public boolean isReady() {
          return true;
        }

        @Override
        public void setReadListener(ReadListener listener) {
          // the whole body is already here: all of it is available, then it is all read
          try {
            listener.onDataAvailable();
            listener.onAllDataRead();
          } catch (IOException e) {
            listener.onError(e);
          }
        }

        @Override
        public int read() {
          return in.read();
        }

        @Override
        public int read(byte[] b, int off, int len) {
          return in.read(b, off, len);
        }
      };
    }

    @Override
    public BufferedReader getReader() {
      return new BufferedReader(new InputStreamReader(getInputStream(), StandardCharsets.UTF_8));
    }
  }

  /** Keeps an error the transport writes (status >= 400) away from the wire, for refuse(). */
  private static final class ErrorCapture extends HttpServletResponseWrapper {
    private final StringBuilder captured = new StringBuilder();
    int status;

    ErrorCapture(HttpServletResponse response) {
      super(response);
    }

    String body() {
      return captured.toString();
    }

    @Override
    public void setStatus(int sc) {
      if (sc >= 400) {
        status = sc;
      } else {
        super.setStatus(sc);
      }
    }

    @Override
    public int getStatus() {
      return status >= 400 ? status : super.getStatus();
    }

    @Override
    public void sendError(int sc, String msg) {
      status = sc;
    }

    @Override
    public void sendError(int sc) {
      status = sc;
    }

    @Override
    public PrintWriter getWriter() throws IOException {
      if (status < 400) {
        return super.getWriter();
      }
      return new PrintWriter(
          new Writer() {
            @Override
            public void write(char[] buf, int off, int len) {
              if (captured.length() < 65536) {
                captured.append(buf, off, Math.min(len, 65536 - captured.length()));
              }
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
          });
    }

    @Override
    public ServletOutputStream getOutputStream() throws IOException {
      if (status < 400) {
        return super.getOutputStream();
      }
      return new ServletOutputStream() {
        @Override
        public boolean isReady() {
          return true;
        }

        @Override
        public void setWriteListener(WriteListener listener) {}

        @Override
        public void write(int b) {}
      };
    }

    @Override
    public void flushBuffer() throws IOException {
      if (status < 400) {
        super.flushBuffer();
      }
    }
  }
}
