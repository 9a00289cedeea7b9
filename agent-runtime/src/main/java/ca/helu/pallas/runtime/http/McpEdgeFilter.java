package ca.helu.pallas.runtime.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
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
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.xnio.IoUtils;

/**
 * The MCP endpoint's edge (docs/runtime.md, "Errors callers see"): every refusal leaves as a
 * JSON-RPC error object with the request's id and a message of ours, never the transport's
 * serialized exception (class names, stack frames, library messages). Methods other than POST, GET
 * and DELETE get 405 without an echo (TRACE included). A POST body that is not a JSON-RPC 2.0
 * request object, or a request whose params the SDK would fail on without answering (initialize and
 * tools/call without an object of params), is refused here, with -32700, -32600 or -32602. The
 * bounds of {@link EdgeLimits} (sessions, concurrent requests, body bytes held, and the connections
 * kept for health) are kept here too.
 */
public final class McpEdgeFilter implements Filter {
  private static final Logger LOG = LoggerFactory.getLogger(McpEdgeFilter.class);
  private static final ObjectMapper JSON = new ObjectMapper(jsonFactory());
  private static final Set<String> METHODS = Set.of("POST", "GET", "DELETE");

  /** The versions the MCP SDK speaks (the header is checked as the specification requires). */
  static final List<String> PROTOCOL_VERSIONS =
      List.of(
          ProtocolVersions.MCP_2024_11_05,
          ProtocolVersions.MCP_2025_03_26,
          ProtocolVersions.MCP_2025_06_18,
          ProtocolVersions.MCP_2025_11_25);

  private static final Set<String> LOG_LEVELS =
      Set.of("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency");

  static final String TOO_LARGE =
      "Payload Too Large: a request body may hold at most "
          + (HttpHost.MAX_BODY_BYTES >> 20)
          + " MiB";
  static final int PARSE_ERROR = -32700;
  static final int INVALID_REQUEST = -32600;
  static final int INVALID_PARAMS = -32602;
  static final int INTERNAL_ERROR = -32603;

  private static final ScheduledExecutorService DEADLINES =
      Executors.newSingleThreadScheduledExecutor(
          Thread.ofPlatform().daemon().name("pallas-body-deadline").factory());

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

  /** Room for new MCP sessions: the agent's count against its cap. */
  public interface Sessions {
    Sessions UNBOUNDED =
        new Sessions() {
          @Override
          public boolean reserve() {
            return true;
          }

          @Override
          public void release() {}
        };

    /** Holds room for a session being initialized; false when the agent holds its maximum. */
    boolean reserve();

    /** The initialize that reserved room has been answered (its session counts by itself). */
    void release();
  }

  private final Duration bodyTimeout;
  private final Drain drain;
  private final EdgeLimits limits;
  private final Sessions sessions;
  private final ConnectionCap connections;
  private final CallCancels calls;
  private final Semaphore requests;
  private final Semaphore bodyBytes;

  /**
   * @param bodyTimeout how long a POST body may take to arrive before the connection closes
   * @param drain what to do with requests while the server drains
   * @param limits what the endpoint holds at once
   * @param sessions the sessions counted against {@code limits.maxSessions()}
   * @param connections the listener's connections: in its reserve only health requests pass
   * @param calls the calls in flight that notifications/cancelled stops
   */
  McpEdgeFilter(
      Duration bodyTimeout,
      Drain drain,
      EdgeLimits limits,
      Sessions sessions,
      ConnectionCap connections,
      CallCancels calls) {
    this.bodyTimeout = bodyTimeout;
    this.drain = drain;
    this.limits = limits;
    this.sessions = sessions;
    this.connections = connections;
    this.calls = calls;
    this.requests = new Semaphore(limits.maxConcurrentRequests());
    this.bodyBytes = new Semaphore((int) limits.maxBodyBytesHeld());
  }

  /** JSON whose only size limit is the body's: a long string is not a parse error. */
  public static JsonFactory jsonFactory() {
    return JsonFactory.builder()
        .streamReadConstraints(
            StreamReadConstraints.builder().maxStringLength((int) HttpHost.MAX_BODY_BYTES).build())
        .build();
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
    if (!method.equals("POST")) {
      if (healthOnly) {
        unavailable(response, NullNode.instance, connections.refusal());
        return;
      }
      pass(request, response, chain, NullNode.instance, false);
      return;
    }
    long declared = request.getContentLengthLong();
    if (declared > HttpHost.MAX_BODY_BYTES) {
      refuse(response, 413, NullNode.instance, INVALID_REQUEST, TOO_LARGE);
      return;
    }
    // a body is held from its first byte until its request is answered: the SDK parses it, and
    // a call's turn runs, inside chain.doFilter
    if (declared > 0 && !bodyBytes.tryAcquire((int) declared)) {
      response.setHeader("Connection", "close"); // the body is not read
      unavailable(response, NullNode.instance, bodiesHeld());
      return;
    }
    byte[] body;
    int held;
    if (declared > 0) {
      body = readBody(request, (int) declared);
      held = (int) declared;
    } else {
      body = readUnknownLength(request, response);
      held = body == null ? 0 : body.length;
    }
    try {
      if (body != null) {
        post(request, response, chain, body, healthOnly);
      }
    } finally {
      bodyBytes.release(held);
    }
  }

  /**
   * A POST whose body has arrived: refused here, or passed on to the transport. With {@code
   * healthOnly} (the connections' reserve in use) only ping and get_health pass.
   */
  private void post(
      HttpServletRequest request,
      HttpServletResponse response,
      FilterChain chain,
      byte[] body,
      boolean healthOnly)
      throws IOException, ServletException {
    JsonNode id = NullNode.instance;
    if (body.length > HttpHost.MAX_BODY_BYTES) {
      response.setHeader("Connection", "close"); // the rest of the body is not read
      refuse(response, 413, id, INVALID_REQUEST, TOO_LARGE);
      return;
    }
    JsonNode message;
    try {
      message = JSON.readTree(body);
    } catch (IOException e) {
      refuse(response, 400, id, PARSE_ERROR, "Parse error: the body is not valid JSON");
      return;
    }
    if (message == null || message.isMissingNode()) {
      refuse(response, 400, id, PARSE_ERROR, "Parse error: the body is empty");
      return;
    }
    if (message.isObject() && message.has("id")) {
      id = message.get("id");
    }
    String problem = envelopeProblem(message);
    if (problem != null) {
      refuse(
          response,
          400,
          id,
          problem.startsWith("Invalid params") ? INVALID_PARAMS : INVALID_REQUEST,
          problem);
      return;
    }
    boolean isResponse = !message.has("method");
    if (isResponse && !answersThisServer(id, request.getHeader("Mcp-Session-Id"))) {
      // the SDK would log an ERROR for it: a client's mistake, refused quietly here
      refuse(response, 400, id, INVALID_REQUEST, UNSOLICITED);
      return;
    }
    boolean draining = drain.active().getAsBoolean();
    Refusal handOver = draining && drain.handOverSessions() ? handOver(request, message) : null;
    if (handOver != null) {
      if (handOver.status() == 503) {
        response.setHeader("Retry-After", "1");
      }
      refuse(response, handOver.status(), id, SHUTTING_DOWN, handOver.message());
      return;
    }
    if (CancelNotifications.answered(calls, request, response, message)) {
      return; // docs/runtime.md, "Deadlines and cancellation"
    }
    String rpcMethod = message.path("method").asText("");
    if (healthOnly && !answeredWhenBusy(rpcMethod, message)) {
      unavailable(response, id, connections.refusal());
      return;
    }
    HttpServletRequest cached = new CachedBody(request, body);
    if (rpcMethod.equals("initialize")) {
      if (!sessions.reserve()) {
        unavailable(
            response,
            id,
            "Service Unavailable: this agent holds its maximum of "
                + limits.maxSessions()
                + " sessions; retry later, and end (DELETE) sessions no longer used");
        return;
      }
      try {
        pass(cached, response, chain, id, false);
      } finally {
        sessions.release();
      }
    } else if (!isResponse && message.has("id") && !answeredWhenBusy(rpcMethod, message)) {
      if (!requests.tryAcquire()) {
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
        requests.release();
      }
    } else {
      pass(cached, response, chain, id, isResponse);
    }
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
  private static boolean answeredWhenBusy(String method, JsonNode message) {
    return method.equals("ping")
        || method.equals("tools/call")
            && message.path("params").path("name").asText("").equals("get_health");
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
        + (limits.maxBodyBytesHeld() >> 20)
        + " MiB at once; retry shortly";
  }

  /** A body of known length, or null once the connection is gone (nobody to answer). */
  private byte[] readBody(HttpServletRequest request, int length) {
    ScheduledFuture<?> deadline = closeAfterBodyTimeout();
    try {
      return request.getInputStream().readNBytes(length);
    } catch (IOException e) {
      LOG.debug("request body not read: {}", e.toString());
      return null;
    } finally {
      deadline.cancel(false);
    }
  }

  /**
   * A body of unknown length (chunked), held piece by piece as it arrives and read up to past the
   * body limit; null, holding nothing, once the connection is gone or when the bytes held would
   * pass their limit (then refused here).
   */
  private byte[] readUnknownLength(HttpServletRequest request, HttpServletResponse response)
      throws IOException {
    ScheduledFuture<?> deadline = closeAfterBodyTimeout();
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    byte[] piece = new byte[64 * 1024];
    boolean spent = false;
    try {
      InputStream in = request.getInputStream();
      int n;
      while (!spent && body.size() <= HttpHost.MAX_BODY_BYTES && (n = in.read(piece)) != -1) {
        spent = !bodyBytes.tryAcquire(n);
        if (!spent) {
          body.write(piece, 0, n);
        }
      }
    } catch (IOException e) {
      LOG.debug("request body not read: {}", e.toString());
      bodyBytes.release(body.size());
      return null;
    } finally {
      deadline.cancel(false);
    }
    if (spent) {
      bodyBytes.release(body.size());
      response.setHeader("Connection", "close"); // the rest of the body is not read
      unavailable(response, NullNode.instance, bodiesHeld());
      return null;
    }
    return body.toByteArray();
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
  private static Refusal handOver(HttpServletRequest request, JsonNode message) {
    String method = message.path("method").asText(null);
    if (method == null || !message.has("id")) {
      return null;
    }
    if (method.equals("initialize")) {
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

  /** What makes this message one the transport cannot answer properly, or null. */
  static String envelopeProblem(JsonNode message) {
    if (message.isArray()) {
      return "Invalid Request: JSON-RPC batches are not supported; send one message per request";
    }
    if (!message.isObject()) {
      return "Invalid Request: the body must be a JSON-RPC request, notification or response object";
    }
    if (!"2.0".equals(message.path("jsonrpc").asText(null))
        || !message.get("jsonrpc").isTextual()) {
      return "Invalid Request: \"jsonrpc\" must be \"2.0\"";
    }
    JsonNode id = message.get("id");
    if (id != null && !(id.isTextual() || id.isIntegralNumber())) {
      return "Invalid Request: \"id\" must be a string or an integer";
    }
    JsonNode method = message.get("method");
    if (method == null) {
      return message.has("result") || message.has("error")
          ? null
          : "Invalid Request: a message needs \"method\" (or \"result\" or \"error\")";
    }
    if (!method.isTextual()) {
      return "Invalid Request: \"method\" must be a string";
    }
    JsonNode params = message.get("params");
    if (params != null && !params.isObject()) {
      return "Invalid params: \"params\" must be an object";
    }
    switch (method.asText()) {
      case "initialize" -> {
        if (params == null || !params.path("protocolVersion").isTextual()) {
          return "Invalid params: initialize needs params with \"protocolVersion\"";
        }
      }
      case "tools/call" -> {
        if (params == null || !params.path("name").isTextual()) {
          return "Invalid params: tools/call needs params with the tool's \"name\"";
        }
        JsonNode arguments = params.get("arguments");
        if (arguments != null && !arguments.isObject()) {
          return "Invalid params: tools/call \"arguments\" must be an object";
        }
      }
      case "logging/setLevel" -> {
        if (params == null || !LOG_LEVELS.contains(params.path("level").asText(""))) {
          return "Invalid params: logging/setLevel needs \"level\", one of debug, info, notice,"
              + " warning, error, critical, alert, emergency";
        }
      }
      case "prompts/get" -> {
        if (params == null || !params.path("name").isTextual()) {
          return "Invalid params: prompts/get needs params with the prompt's \"name\"";
        }
      }
      default -> {}
    }
    return null;
  }

  /** Our words for what the transport refused; its own only where they name no internals. */
  static String messageFor(int status, String transportBody) {
    String said = "";
    try {
      said = JSON.readTree(transportBody).path("jsonRpcError").path("message").asText("");
    } catch (IOException | RuntimeException e) {
      // not the transport's JSON (e.g. a container error page)
    }
    return switch (status) {
      case 400 ->
          said.contains("Accept header")
              ? "Bad Request: the Accept header must list application/json and text/event-stream"
              : said.startsWith("Session ID required")
                  ? "Bad Request: this request needs the Mcp-Session-Id header from initialize"
                  : "Bad Request: not a valid MCP request";
      case 404 -> "Not Found: no such session; initialize a new one";
      case 405 -> "Method Not Allowed";
      case 406 ->
          "Not Acceptable: the Accept header must list application/json and text/event-stream";
      case 413 -> TOO_LARGE;
      case 415 -> "Unsupported Media Type: Content-Type must be application/json";
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

  private static String safe(String method) {
    return method.length() > 16 || !method.chars().allMatch(Character::isLetter)
        ? "(unusual)"
        : method;
  }

  /** The request with its body already read. */
  private static final class CachedBody extends HttpServletRequestWrapper {
    private final byte[] body;

    CachedBody(HttpServletRequest request, byte[] body) {
      super(request);
      this.body = body;
    }

    @Override
    public ServletInputStream getInputStream() {
      ByteArrayInputStream in = new ByteArrayInputStream(body);
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
      return new BufferedReader(
          new InputStreamReader(new ByteArrayInputStream(body), StandardCharsets.UTF_8));
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
