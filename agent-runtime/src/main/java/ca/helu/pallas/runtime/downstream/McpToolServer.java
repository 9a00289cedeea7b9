package ca.helu.pallas.runtime.downstream;

import ca.helu.pallas.runtime.Causes;
import ca.helu.pallas.runtime.loop.CallContext;
import ca.helu.pallas.runtime.loop.Progress;
import ca.helu.pallas.runtime.loop.ToolResult;
import ca.helu.pallas.runtime.loop.ToolServer;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

/**
 * A downstream MCP server (or another agent) reached over Streamable HTTP: one shared client
 * connection, opened on first use and reopened after a failure, so a server that was down at
 * startup works once it is up.
 *
 * <p>The caller's bearer travels in the Reactor context of each call and is read by a request
 * customizer (docs/contract.md, "Bearer forwarding": never a thread-local, never shared mutable
 * headers), so concurrent calls with different bearers cannot see each other's token.
 */
public final class McpToolServer implements ToolServer, AutoCloseable {
  private static final ObjectMapper MESSAGES = new ObjectMapper();

  private static final Logger LOG = LoggerFactory.getLogger(McpToolServer.class);
  private static final String BEARER = "pallas.bearer";
  private static final String SENT = "pallas.sent";
  private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);

  private final String name;
  private final String url;
  private final Map<String, String> headers;
  private final boolean forwardBearer;
  private final Duration timeout;
  private final Predicate<String> exposed;
  private final Object lock = new Object();
  private final Object listing = new Object();
  private final ConcurrentHashMap<String, Progress> relays = new ConcurrentHashMap<>();
  private McpAsyncClient client;
  private HttpClientStreamableHttpTransport transport; // the client's; guarded by lock
  private volatile List<McpSchema.Tool> tools;

  /**
   * @param headers resolved static headers (secrets already read)
   * @param forwardInboundAuth send the caller's bearer, unless an Authorization header is set
   * @param exposed which of the server's tools the model may see
   */
  public McpToolServer(
      String name,
      String url,
      Map<String, String> headers,
      boolean forwardInboundAuth,
      Duration timeout,
      Predicate<String> exposed) {
    this.name = name;
    this.url = url;
    this.headers = Map.copyOf(headers);
    this.forwardBearer =
        forwardInboundAuth
            && headers.keySet().stream().noneMatch("Authorization"::equalsIgnoreCase);
    this.timeout = timeout;
    this.exposed = exposed;
  }

  @Override
  public String name() {
    return name;
  }

  public String url() {
    return url;
  }

  public Map<String, String> headers() {
    return headers;
  }

  @Override
  public List<McpSchema.Tool> tools() {
    List<McpSchema.Tool> cached = tools;
    if (cached != null) {
      return cached;
    }
    // one listing at a time: a burst of first calls waits for it instead of each asking the server
    synchronized (listing) {
      cached = tools;
      if (cached != null) {
        return cached;
      }
      try {
        McpSchema.ListToolsResult result = client().listTools().block(timeout);
        List<McpSchema.Tool> fresh =
            result.tools().stream().filter(t -> exposed.test(t.name())).toList();
        tools = fresh;
        return fresh;
      } catch (RuntimeException e) {
        reset();
        throw new IllegalStateException(name + ": cannot list tools: " + describe(e), e);
      }
    }
  }

  @Override
  public ToolResult call(String tool, Map<String, Object> arguments, CallContext context) {
    McpAsyncClient c;
    HttpClientStreamableHttpTransport via;
    try {
      synchronized (lock) {
        c = client();
        via = transport;
      }
    } catch (RuntimeException e) {
      reset();
      return ToolResult.failed(describe(e));
    }
    // when our caller wants progress, ask for the downstream's too and pass it on (a sub-agent's
    // own steps show up under the caller's token)
    String relayToken = null;
    McpSchema.CallToolRequest.Builder request =
        McpSchema.CallToolRequest.builder().name(tool).arguments(arguments);
    if (context.progress() != Progress.NONE) {
      relayToken = "pallas-" + UUID.randomUUID();
      relays.put(relayToken, context.progress());
      request.progressToken(relayToken);
    }
    // the request as sent, so that a call that stops can cancel it downstream (docs/runtime.md,
    // "Deadlines and cancellation"): the SDK's client tells no request its JSON-RPC id
    DownstreamCancel sent = new DownstreamCancel();
    Map<String, Object> values = new HashMap<>(2);
    values.put(SENT, sent);
    if (forwardBearer && context.bearer().isPresent()) {
      values.put(BEARER, context.bearer().get());
    }
    McpTransportContext transportContext = McpTransportContext.create(values);
    Mono<McpSchema.CallToolResult> call =
        c.callTool(request.build())
            .contextWrite(Context.of(McpTransportContext.KEY, transportContext));
    Runnable unregister =
        context.cancellation().onStop(why -> sent.cancel(via, transportContext, why, name));
    try {
      McpSchema.CallToolResult result = call.timeout(timeout).block();
      if (result == null) {
        return ToolResult.failed("no result");
      }
      String text = textOf(result);
      return Boolean.TRUE.equals(result.isError())
          ? ToolResult.failed(text.isEmpty() ? "the tool reported an error" : text)
          : ToolResult.ok(text);
    } catch (RuntimeException e) {
      if (context.cancellation().stopped()) {
        // this call stopped, not the connection: the other calls on it go on
        return ToolResult.failed("cancelled: " + context.cancellation().reason().words());
      }
      if (!(e instanceof McpError)) {
        reset();
      }
      return ToolResult.failed(describe(e));
    } finally {
      unregister.run();
      if (relayToken != null) {
        relays.remove(relayToken);
      }
    }
  }

  private String describe(Throwable e) {
    if (Causes.find(e, TimeoutException.class).isPresent()) {
      return "timed out after " + timeout.toSeconds() + "s";
    }
    if (e instanceof McpError mcp) {
      return "error from server: " + mcp.getMessage();
    }
    if (Causes.find(e, ConnectException.class).isPresent()) {
      return "unreachable (connection refused)";
    }
    Throwable root = Causes.root(e);
    String message = root.getMessage();
    return (message == null || message.isBlank()) ? root.getClass().getSimpleName() : message;
  }

  static String textOf(McpSchema.CallToolResult result) {
    List<String> parts = new ArrayList<>();
    if (result.content() != null) {
      for (McpSchema.Content c : result.content()) {
        if (c instanceof McpSchema.TextContent t) {
          parts.add(t.text());
        } else if (c instanceof McpSchema.ImageContent i) {
          parts.add("[image " + i.mimeType() + "]");
        } else if (c instanceof McpSchema.EmbeddedResource r
            && r.resource() instanceof McpSchema.TextResourceContents t) {
          parts.add(t.text());
        } else if (c instanceof McpSchema.ResourceLink l) {
          parts.add("[resource " + l.uri() + "]");
        }
      }
    }
    if (parts.isEmpty() && result.structuredContent() != null) {
      parts.add(String.valueOf(result.structuredContent()));
    }
    return String.join("\n", parts);
  }

  /** The shared client, connected on first use (the caller holds {@code lock}). */
  private McpAsyncClient client() {
    synchronized (lock) {
      if (client != null) {
        return client;
      }
      URI uri = URI.create(url);
      String base = uri.getScheme() + "://" + uri.getRawAuthority();
      String endpoint =
          uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
      if (uri.getRawQuery() != null) {
        endpoint += "?" + uri.getRawQuery();
      }
      HttpRequest.Builder request = HttpRequest.newBuilder();
      headers.forEach(request::header);
      HttpClientStreamableHttpTransport.Builder transportBuilder =
          HttpClientStreamableHttpTransport.builder(base)
              .endpoint(endpoint)
              .connectTimeout(CONNECT_TIMEOUT)
              .requestBuilder(request)
              .asyncHttpRequestCustomizer((builder, method, target, body, ctx) -> {
                if ("POST".equals(method) && ctx.get(SENT) instanceof DownstreamCancel sent) {
                  sent.posted(body);
                }
                // only on the call's own POSTs (tools/call, and its cancel): the SDK may
                // (re)open its long-lived GET stream inside the context of whichever call
                // triggered it, and a bearer there would outlive its call (docs/contract.md,
                // "Bearer forwarding")
                if (forwardBearer
                    && ctx.get(BEARER) instanceof String token
                    && "POST".equals(method)
                    && isCallOwn(body)) {
                  builder.setHeader("Authorization", "Bearer " + token);
                }
                return Mono.just(builder);
              });
      HttpClientStreamableHttpTransport freshTransport = transportBuilder.build();
      McpAsyncClient fresh =
          McpClient.async(freshTransport)
              .clientInfo(new McpSchema.Implementation("pallas", "1.0.0"))
              .requestTimeout(timeout)
              .initializationTimeout(timeout)
              .toolsChangeConsumer(changed -> Mono.fromRunnable(() -> tools = null))
              .progressConsumer(n ->
                  Mono.fromRunnable(() -> {
                    var progress = relays.get(String.valueOf(n.progressToken()));
                    if (progress != null && n.message() != null) {
                      progress.relay(
                          n.message(), n.total() != null && n.total().equals(n.progress()));
                    }
                  }))
              .build();
      try {
        fresh.initialize().block(timeout);
      } catch (RuntimeException e) {
        fresh.close();
        throw e;
      }
      client = fresh;
      transport = freshTransport;
      LOG.debug("connected to {} at {}", name, url);
      return fresh;
    }
  }

  private void reset() {
    McpAsyncClient old;
    synchronized (lock) {
      old = client;
      client = null;
      transport = null;
      tools = null;
    }
    if (old != null) {
      try {
        old.close();
      } catch (RuntimeException e) {
        // already broken
      }
    }
  }

  @Override
  public void close() {
    reset();
  }

  /** Whether an outgoing JSON-RPC message is a tools/call request (parsed, not searched). */
  static boolean isToolCall(String body) {
    return "tools/call".equals(methodOf(body));
  }

  /** A tools/call request, or the notification cancelling one. */
  static boolean isCallOwn(String body) {
    String method = methodOf(body);
    return "tools/call".equals(method) || DownstreamCancel.METHOD.equals(method);
  }

  private static String methodOf(String body) {
    if (body == null) {
      return null;
    }
    try {
      return MESSAGES.readTree(body).path("method").asText(null);
    } catch (IOException e) {
      return null;
    }
  }
}
