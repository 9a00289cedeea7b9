package ca.helu.pallas.runtime.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.NullNode;
import io.modelcontextprotocol.spec.McpSchema;
import io.undertow.servlet.handlers.ServletRequestContext;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The MCP endpoint's edge (docs/runtime.md, "Errors callers see"): the order in which a request is
 * checked, bounded and handed to the transport. Each job is a type of its own: the request line and
 * headers ({@link HeaderChecks}), the body's bounds ({@link RequestBody}) and envelope ({@link
 * McpEnvelope}), the drain and its hand-over ({@link Drain}), room for sessions ({@link
 * EdgeSessions}), the concurrent requests and the connections kept for health ({@link RequestPool},
 * {@link ConnectionCap}), and the refusals, always JSON-RPC errors of ours ({@link EdgeErrors},
 * {@link TransportErrors}), and who may call ({@link EdgeAuth}, when inbound authentication is on).
 * A client notification the agent does not act on is accepted here (202).
 */
public final class McpEdgeFilter implements Filter {
  private static final Logger LOG = LoggerFactory.getLogger(McpEdgeFilter.class);

  static final String UNSOLICITED = "Invalid Request: this server awaits no response with this id";

  static final String NO_SUCH_RESOURCE =
      "Resource not found: this server has no resource of that uri to subscribe to (resources/list"
          + " names its resources)";

  private final Duration bodyTimeout;
  private final Drain drain;
  private final RequestPool pool;
  private final EdgeLimits limits;
  private final EdgeSessions sessions;
  private final ConnectionCap connections;
  private final CallCancels calls;
  private final EdgeAuth auth;
  private final Predicate<String> resources;
  private final ObjectMapper json;
  private final String tooLarge;

  /**
   * @param bodyTimeout how long a POST body may take to arrive before the connection closes
   * @param drain what to do with requests while the server drains
   * @param pool the requests and body bytes the process holds at once
   * @param sessions the sessions counted against {@code limits.maxSessions()}
   * @param connections the listener's connections: in its reserve only health requests pass
   * @param calls the calls in flight that notifications/cancelled stops
   * @param auth who may call, or null: anyone (no inbound authentication)
   * @param resources whether the MCP server has a resource of this URI
   */
  McpEdgeFilter(
      Duration bodyTimeout,
      Drain drain,
      RequestPool pool,
      EdgeSessions sessions,
      ConnectionCap connections,
      CallCancels calls,
      EdgeAuth auth,
      Predicate<String> resources) {
    this.bodyTimeout = bodyTimeout;
    this.drain = drain;
    this.pool = pool;
    this.limits = pool.limits();
    this.sessions = sessions;
    this.connections = connections;
    this.calls = calls;
    this.auth = auth;
    this.resources = resources;
    this.json = new ObjectMapper(limits.jsonFactory());
    this.tooLarge = EdgeErrors.tooLarge(limits.maxBodyBytes());
  }

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    HttpServletRequest request = (HttpServletRequest) req;
    HttpServletResponse response = (HttpServletResponse) res;
    // draining, each response closes its connection so that the client's next one goes to a ready
    // replica; in the connections' reserve, so that the reserve turns over. Set on the exchange:
    // a Connection header would be overwritten by the SDK's event streams, which say keep-alive
    boolean healthOnly = connections.healthOnly();
    if (drain.draining() || healthOnly) {
      ServletRequestContext.requireCurrent().getExchange().setPersistent(false);
    }
    // credentials first: a request with a bad token learns nothing else about this agent, and a
    // token that could not be forwarded is an invalid token here (401), not a bad request
    if (auth != null && !auth.admit(request, response)) {
      return;
    }
    Refusal problem = HeaderChecks.problem(request);
    if (problem != null) {
      if (problem.status() == 405) {
        response.setHeader("Allow", "GET, POST, DELETE");
      }
      EdgeErrors.refuse(response, problem, NullNode.instance);
      return;
    }
    String owned = request.getHeader("Mcp-Session-Id");
    if (auth != null && owned != null && !auth.mayUse(request, owned, sessions)) {
      // another caller's session is, to this one, a session that does not exist
      EdgeErrors.refuse(
          response,
          404,
          NullNode.instance,
          EdgeErrors.INVALID_REQUEST,
          EdgeErrors.messageFor(404, ""));
      return;
    }
    if (!request.getMethod().equals("POST")) {
      if (healthOnly) {
        EdgeErrors.unavailable(response, NullNode.instance, connections.refusal());
        return;
      }
      pass(request, response, chain, NullNode.instance, false);
      return;
    }
    long declared = request.getContentLengthLong();
    if (declared > limits.maxBodyBytes()) {
      EdgeErrors.refuse(response, 413, NullNode.instance, EdgeErrors.INVALID_REQUEST, tooLarge);
      return;
    }
    // a body is held from its first byte until its request is answered (the SDK parses it, and a
    // call's turn runs, inside chain.doFilter), and its share given back however that ends: an
    // error while reading (an OutOfMemoryError among them) included
    RequestBody body = new RequestBody(pool, bodyTimeout);
    try {
      if (body.read(request, response, declared)) {
        post(request, response, chain, body, healthOnly);
      }
    } finally {
      body.release();
    }
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
      RequestBody body,
      boolean healthOnly)
      throws IOException, ServletException {
    if (body.length() > limits.maxBodyBytes()) {
      response.setHeader("Connection", "close"); // the rest of the body is not read
      EdgeErrors.refuse(response, 413, NullNode.instance, EdgeErrors.INVALID_REQUEST, tooLarge);
      return;
    }
    McpEnvelope envelope = McpEnvelope.read(json, body.bytes(), body.length());
    JsonNode id = envelope.id();
    if (envelope.problem() != null) {
      EdgeErrors.refuse(response, 400, id, envelope.code(), envelope.problem());
      return;
    }
    if (auth != null && !auth.allows(request, response, envelope)) {
      return;
    }
    String session = request.getHeader("Mcp-Session-Id");
    if (envelope.isResponse() && !HeaderChecks.answersThisServer(id, session)) {
      // a client's mistake, refused quietly here
      EdgeErrors.refuse(response, 400, id, EdgeErrors.INVALID_REQUEST, UNSOLICITED);
      return;
    }
    if (envelope.isNotification() && !envelope.method().equals("notifications/initialized")) {
      accept(response, envelope, session);
      return;
    }
    if (envelope.method().equals("resources/subscribe") && !resources.test(envelope.uri())) {
      // the SDK keeps any URI as a subscription, one more for each request, until the session
      // ends; answered as the SDK answers resources/read of a URI it does not have
      EdgeErrors.refuse(
          response, 200, id, McpSchema.ErrorCodes.RESOURCE_NOT_FOUND, NO_SUCH_RESOURCE);
      return;
    }
    Refusal handOver = drain.handOver(request, envelope);
    if (handOver != null) {
      if (handOver.status() == 503) {
        response.setHeader("Retry-After", "1");
      }
      EdgeErrors.refuse(response, handOver, id);
      return;
    }
    boolean answeredWhenBusy = answeredWhenBusy(envelope.method(), envelope.tool());
    if (healthOnly && !answeredWhenBusy) {
      EdgeErrors.unavailable(response, id, connections.refusal());
      return;
    }
    if (envelope.hasId()) {
      CancelNotifications.noteId(request, id);
    }
    HttpServletRequest cached = body.cached(request);
    if (envelope.method().equals("initialize")) {
      if (!sessions.reserve(request.getRemoteAddr())) {
        EdgeErrors.unavailable(
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
        EdgeErrors.unavailable(
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
      EdgeErrors.refuse(
          response,
          400,
          NullNode.instance,
          EdgeErrors.INVALID_REQUEST,
          "Bad Request: this request needs the Mcp-Session-Id header from initialize");
      return;
    }
    if (!sessions.known(session)) {
      EdgeErrors.refuse(
          response,
          404,
          NullNode.instance,
          EdgeErrors.INVALID_REQUEST,
          EdgeErrors.messageFor(404, ""));
      return;
    }
    if (envelope.method().equals(CancelNotifications.METHOD)) {
      CancelNotifications.cancel(calls, session, envelope.cancelled());
    } else {
      LOG.debug("accepted the client notification {}", EdgeErrors.safe(envelope.method()));
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
    TransportErrors capture = new TransportErrors(response);
    chain.doFilter(request, capture);
    if (capture.status >= 500 && isResponse) {
      // the transport fails on a response to a request it never sent: the client's mistake
      EdgeErrors.refuse(response, 400, id, EdgeErrors.INVALID_REQUEST, UNSOLICITED);
      return;
    }
    if (capture.status >= 500 && drain.draining()) {
      // the transport closes with the server: a retry belongs on another replica
      response.setHeader("Retry-After", "1");
      EdgeErrors.refuse(
          response,
          503,
          id,
          Drain.SHUTTING_DOWN,
          "Service Unavailable: this server is shutting down");
      return;
    }
    if (capture.status == 503) {
      // a bound of the transport's (sessions at the cap, each busy): retry later
      EdgeErrors.refuse(
          response, 503, id, EdgeErrors.UNAVAILABLE, EdgeErrors.messageFor(503, capture.body()));
      return;
    }
    if (capture.status >= 400) {
      int status = capture.status >= 500 ? 500 : capture.status;
      EdgeErrors.refuse(
          response,
          status,
          id,
          status >= 500 ? EdgeErrors.INTERNAL_ERROR : EdgeErrors.INVALID_REQUEST,
          EdgeErrors.messageFor(status, capture.body()));
    }
  }

  /**
   * Calls kept out of the request limit and answered from the connections' reserve, so a busy or
   * crowded agent still tells how it is.
   */
  private static boolean answeredWhenBusy(String method, String tool) {
    return method.equals("ping") || method.equals("tools/call") && "get_health".equals(tool);
  }
}
