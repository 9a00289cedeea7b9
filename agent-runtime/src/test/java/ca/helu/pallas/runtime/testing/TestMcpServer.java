package ca.helu.pallas.runtime.testing;

import ca.helu.pallas.runtime.http.HttpHost;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema;
import io.undertow.server.HttpHandler;
import io.undertow.util.SameThreadExecutor;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real MCP server for tests, built on the Java SDK's Streamable HTTP servlet transport on
 * Undertow (127.0.0.1, a free or given port). Tools: {@code echo {text}}, {@code rendezvous}
 * (\"met\" when two calls overlap), {@code whoami} (the Authorization header of that very call, or
 * "none"), {@code sleep {ms}}, {@code fail}. Or, in {@link Mode#HANG} and {@link Mode#GARBAGE}, a
 * server that accepts connections and never answers, or answers with something that is not
 * JSON-RPC. {@link #requiring} starts one that refuses requests without a given header.
 */
public final class TestMcpServer implements AutoCloseable {
  /** How the server behaves. */
  public enum Mode {
    MCP,
    HANG,
    GARBAGE
  }

  private static final String AUTH = "authorization";
  private final HttpHost host;
  private final McpSyncServer server;
  private final List<String> authorizations = new CopyOnWriteArrayList<>();
  private final AtomicInteger deletes = new AtomicInteger();
  private final List<TraceContext> traceContexts = new CopyOnWriteArrayList<>();

  /** The W3C trace context a tools/call came with: its traceparent header and its _meta entry. */
  public record TraceContext(String header, String meta) {}

  private final CyclicBarrier rendezvous = new CyclicBarrier(2);

  private TestMcpServer(Mode mode, int port) {
    this(mode, port, null, null);
  }

  /**
   * @param header with {@code value}: a header every request must carry, else it is refused with
   *     401 (null: none)
   */
  private TestMcpServer(Mode mode, int port, String header, String value) {
    if (mode == Mode.MCP) {
      var json = McpJsonDefaults.getMapper();
      HttpServletStreamableServerTransportProvider transport =
          HttpServletStreamableServerTransportProvider.builder()
              .jsonMapper(json)
              .mcpEndpoint("/mcp")
              .contextExtractor(request -> {
                String auth = request.getHeader("Authorization");
                if ("DELETE".equals(request.getMethod())) {
                  deletes.incrementAndGet();
                }
                String traceparent = request.getHeader("traceparent");
                return McpTransportContext.create(
                    Map.of(
                        AUTH,
                        auth == null ? "none" : auth,
                        "traceparent",
                        traceparent == null ? "none" : traceparent));
              })
              .build();
      server =
          McpServer.sync(transport)
              .serverInfo("test-mcp", "1.0.0")
              .jsonMapper(json)
              .tools(
                  tool(
                      "echo",
                      "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}}}",
                      (ctx, args) -> text(String.valueOf(args.getOrDefault("text", "")))),
                  tool(
                      "whoami",
                      "{\"type\":\"object\",\"properties\":{}}",
                      (ctx, args) -> {
                        String auth = String.valueOf(ctx.get(AUTH));
                        authorizations.add(auth);
                        return text(auth);
                      }),
                  tool(
                      "sleep",
                      "{\"type\":\"object\",\"properties\":{\"ms\":{\"type\":\"integer\"}}}",
                      (ctx, args) -> {
                        try {
                          Thread.sleep(((Number) args.getOrDefault("ms", 1000)).longValue());
                        } catch (InterruptedException e) {
                          Thread.currentThread().interrupt();
                        }
                        return text("slept");
                      }),
                  tool(
                      "rendezvous",
                      "{\"type\":\"object\",\"properties\":{}}",
                      (ctx, args) -> {
                        // answers "met" only when another rendezvous call is in flight at once
                        try {
                          rendezvous.await(3, TimeUnit.SECONDS);
                          return text("met");
                        } catch (Exception e) {
                          rendezvous.reset();
                          return text("alone");
                        }
                      }),
                  tool(
                      "fail",
                      "{\"type\":\"object\",\"properties\":{}}",
                      (ctx, args) ->
                          McpSchema.CallToolResult.builder()
                              .addTextContent("the fail tool always fails")
                              .isError(true)
                              .build()))
              .build();
      host =
          HttpHost.builder("127.0.0.1", port)
              .servlet("/mcp", header == null ? transport : requiring(transport, header, value))
              .build()
              .start();
    } else {
      server = null;
      HttpHandler handler =
          mode == Mode.HANG
              ? exchange -> exchange.dispatch(SameThreadExecutor.INSTANCE, () -> {})
              : exchange ->
                  HttpHost.send(
                      exchange,
                      200,
                      "application/json",
                      "not json".getBytes(StandardCharsets.UTF_8));
      host = HttpHost.builder("127.0.0.1", port).exact("/mcp", handler).build().start();
    }
  }

  public static TestMcpServer start() {
    return new TestMcpServer(Mode.MCP, 0);
  }

  public static TestMcpServer start(Mode mode) {
    return new TestMcpServer(mode, 0);
  }

  public static TestMcpServer start(Mode mode, int port) {
    return new TestMcpServer(mode, port);
  }

  /** A server that refuses (401) every request without {@code header: value}. */
  public static TestMcpServer requiring(String header, String value) {
    return new TestMcpServer(Mode.MCP, 0, header, value);
  }

  private static HttpServlet requiring(HttpServlet transport, String header, String value) {
    return new HttpServlet() {
      @Override
      protected void service(HttpServletRequest request, HttpServletResponse response)
          throws ServletException, IOException {
        if (!value.equals(request.getHeader(header))) {
          response.setStatus(401);
          response.setContentType("application/json");
          response.getWriter().write("{\"error\":\"this server needs the header " + header + "\"}");
          return;
        }
        transport.service((ServletRequest) request, (ServletResponse) response);
      }
    };
  }

  private interface Handler {
    McpSchema.CallToolResult call(McpTransportContext ctx, Map<String, Object> args);
  }

  private McpServerFeatures.SyncToolSpecification tool(
      String name, String schema, Handler handler) {
    return McpServerFeatures.SyncToolSpecification.builder()
        .tool(
            McpSchema.Tool.builder()
                .name(name)
                .description("test tool " + name)
                .inputSchema(McpJsonDefaults.getMapper(), schema)
                .build())
        .callHandler((exchange, request) -> {
          traceContexts.add(
              new TraceContext(
                  String.valueOf(exchange.transportContext().get("traceparent")),
                  request.meta() == null
                      ? "none"
                      : String.valueOf(request.meta().get("traceparent"))));
          return handler.call(
              exchange.transportContext(),
              request.arguments() == null ? Map.of() : request.arguments());
        })
        .build();
  }

  private static McpSchema.CallToolResult text(String text) {
    return McpSchema.CallToolResult.builder().addTextContent(text).isError(false).build();
  }

  public String url() {
    return "http://127.0.0.1:" + host.port() + "/mcp";
  }

  public int port() {
    return host.port();
  }

  /** Authorization headers seen by whoami, one per call, in order. */
  public List<String> authorizations() {
    return authorizations;
  }

  /** The trace context of each tools/call received, in order ("none" where there was none). */
  public List<TraceContext> traceContexts() {
    return traceContexts;
  }

  /** DELETE requests received (session teardowns, e.g. by the health probe). */
  public int deletes() {
    return deletes.get();
  }

  /**
   * Adds a tool answering {@code answer}, and tells the server's sessions that its tools changed
   * ({@code notifications/tools/list_changed}).
   */
  public void addTool(String name, String description, String answer) {
    addTool(
        McpSchema.Tool.builder()
            .name(name)
            .description(description)
            .inputSchema(McpJsonDefaults.getMapper(), "{\"type\":\"object\"}")
            .build(),
        answer);
  }

  /** Adds {@code tool}, answering {@code answer}, and tells the sessions the tools changed. */
  public void addTool(McpSchema.Tool tool, String answer) {
    server.addTool(
        McpServerFeatures.SyncToolSpecification.builder()
            .tool(tool)
            .callHandler((exchange, request) -> text(answer))
            .build());
    server.notifyToolsListChanged();
  }

  /** Stops listening at once, dropping every open connection and stream mid-response. */
  public void kill() {
    host.close();
  }

  @Override
  public void close() {
    if (server != null) {
      server.closeGracefully();
    }
    host.close();
  }
}
