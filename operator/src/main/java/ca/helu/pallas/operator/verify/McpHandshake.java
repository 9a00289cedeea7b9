package ca.helu.pallas.operator.verify;

import ca.helu.pallas.operator.status.Reason;
import ca.helu.pallas.operator.status.Verification;
import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.client.transport.McpHttpClientTransportAuthorizationException;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpTransportException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.nio.channels.UnresolvedAddressException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operator's handshake with one agent (docs/status.md, "Verified"): the official MCP client
 * opens a session ({@code initialize}, then {@code notifications/initialized}), lists the tools and
 * closes the session, which ends it on the server (DELETE), as the runtime's own downstream probe
 * does (docs/runtime.md, "Health"). What the server says is bounded before it reaches the status; a
 * failure is worded by its type, never from the SDK's message, which may quote the answer or name
 * library classes.
 */
public final class McpHandshake implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(McpHandshake.class);

  /** Each step's limit, as the runtime's downstream probe (docs/runtime.md, "Health"). */
  public static final Duration TIMEOUT = Duration.ofSeconds(3);

  /** At most this many tool names go into the status (a status is stored whole in etcd). */
  public static final int MAX_TOOLS = 64;

  /** The most of any one text a server gives (a name, a version, an error) kept. */
  static final int MAX_TEXT = 200;

  private static final McpSchema.Implementation CLIENT =
      new McpSchema.Implementation("pallas-operator", "1.0.0");

  // one client for every handshake (SharedHttpClientBuilder says why); HTTP/1.1, as agents serve
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(TIMEOUT).version(HttpClient.Version.HTTP_1_1).build();

  /** Asks one agent's MCP endpoint; never throws: a failure is a False verification. */
  public Verification run(URI endpoint) {
    return run(endpoint, null);
  }

  /**
   * Asks one agent's MCP endpoint with a bearer token (an agent of a fleet with {@code spec.auth}
   * and {@code openHealth: false}: the operator's own, {@link OperatorTokens}), or none when null.
   */
  public Verification run(URI endpoint, String bearer) {
    String base = endpoint.getScheme() + "://" + endpoint.getRawAuthority();
    String path = endpoint.getRawPath() == null ? "/" : endpoint.getRawPath();
    HttpRequest.Builder request = HttpRequest.newBuilder();
    if (bearer != null) {
      request.header("Authorization", "Bearer " + bearer);
    }
    McpAsyncClient client =
        McpClient.async(
                HttpClientStreamableHttpTransport.builder(base)
                    .endpoint(path)
                    .clientBuilder(new SharedHttpClientBuilder(http))
                    .requestBuilder(request)
                    .connectTimeout(TIMEOUT)
                    .build())
            .clientInfo(CLIENT)
            .requestTimeout(TIMEOUT)
            .initializationTimeout(TIMEOUT)
            .build();
    try {
      McpSchema.InitializeResult init;
      try {
        init = client.initialize().timeout(TIMEOUT.multipliedBy(2)).block();
      } catch (RuntimeException e) {
        return Verification.failed(
            Reason.InitializeFailed, "initialize: " + describe(e, bearer != null));
      }
      List<McpSchema.Tool> tools;
      try {
        tools = client.listTools().timeout(TIMEOUT.multipliedBy(2)).block().tools();
      } catch (RuntimeException e) {
        return Verification.failed(
            Reason.ToolsListFailed, "tools/list: " + describe(e, bearer != null));
      }
      McpSchema.Implementation server = init.serverInfo();
      return Verification.verified(
          server == null ? null : bounded(server.name()),
          server == null ? null : bounded(server.version()),
          bounded(init.protocolVersion()),
          tools.stream().limit(MAX_TOOLS).map(t -> bounded(t.name())).toList());
    } finally {
      try {
        client.closeGracefully().timeout(TIMEOUT).block();
      } catch (RuntimeException e) {
        // the session ends on the server anyway when it idles out (docs/runtime.md, "Limits")
        LOG.debug("closing the handshake session with {} failed: {}", endpoint, e.toString());
        client.close();
      }
    }
  }

  /**
   * Stops the shared client at once: {@code close()} would wait for every exchange, and a stream a
   * server never ends (a GET the SDK left open, a server that hangs) would block the operator's
   * stop (seen in McpHandshakeIT).
   */
  @Override
  public void close() {
    http.shutdownNow();
  }

  /** A failure in words a user can act on, by its type. */
  static String describe(Throwable e) {
    return describe(e, false);
  }

  /** As above, for a request that carried the operator's token or none. */
  static String describe(Throwable e, boolean withToken) {
    if (find(e, McpError.class) instanceof McpError mcp) {
      return "error from the server: " + bounded(mcp.getMessage());
    }
    if (find(e, UnknownHostException.class) != null
        || find(e, UnresolvedAddressException.class) != null) {
      return "unreachable (its Service name does not resolve)";
    }
    if (find(e, HttpConnectTimeoutException.class) != null) {
      return "unreachable (connect timed out after " + TIMEOUT.toSeconds() + "s)";
    }
    if (find(e, TimeoutException.class) != null) {
      return "no answer within " + TIMEOUT.toSeconds() + "s";
    }
    if (find(e, ConnectException.class) != null) {
      return "unreachable (connection refused)";
    }
    if (find(e, McpHttpClientTransportAuthorizationException.class)
        instanceof McpHttpClientTransportAuthorizationException refused) {
      // an agent that requires credentials the operator's handshake did not send, or refused
      // its ServiceAccount's token
      return (withToken
              ? "refused the operator's ServiceAccount token (HTTP "
              : "refused the operator's unauthenticated request (HTTP ")
          + refused.getResponseInfo().statusCode()
          + ")";
    }
    if (find(e, McpTransportException.class) != null
        || find(e, IllegalArgumentException.class) != null) {
      return "answered something that is not a valid MCP message";
    }
    if (find(e, IOException.class) != null) {
      return "the connection failed";
    }
    LOG.info("unclassified handshake failure: {}", bounded(String.valueOf(e)));
    return "failed (an unexpected error in the operator's MCP client; its log has it)";
  }

  private static Throwable find(Throwable e, Class<? extends Throwable> type) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (type.isInstance(t)) {
        return t;
      }
    }
    return null;
  }

  /** One line of at most {@link #MAX_TEXT} characters, or null. */
  static String bounded(String text) {
    if (text == null) {
      return null;
    }
    String line = text.replaceAll("[\\p{Cntrl}]+", " ").strip();
    return line.length() <= MAX_TEXT ? line : line.substring(0, MAX_TEXT) + "…";
  }
}
