package ca.helu.pallas.runtime.tracing;

import ca.helu.pallas.runtime.loop.CallContext;
import ca.helu.pallas.runtime.loop.ToolResult;
import ca.helu.pallas.runtime.loop.ToolServer;
import io.modelcontextprotocol.spec.McpSchema;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A tool server whose every tool call is a span (docs/observability.md, "Spans"): {@code tools/call
 * {tool}}, a client span with the MCP semantic conventions' attributes and those of the GenAI
 * {@code execute_tool} operation (the conventions let the MCP client span be the tool execution's
 * span), the server's manifest name, and the outcome; never the arguments or the result. The span
 * is current while the call runs, so the MCP client sends it as the server's parent.
 */
final class TracedToolServer implements ToolServer {
  private final ToolServer server;
  private final Tracer tracer;
  private final String host;
  private final int port;
  private final boolean peer;
  private final Map<String, String> spanNames = new ConcurrentHashMap<>();

  TracedToolServer(ToolServer server, String url, boolean peer, Tracer tracer) {
    this.server = server;
    this.peer = peer;
    this.tracer = tracer;
    URI uri = url == null ? null : URI.create(url);
    this.host = uri == null ? null : uri.getHost();
    this.port =
        uri == null
            ? -1
            : uri.getPort() > 0 ? uri.getPort() : "https".equals(uri.getScheme()) ? 443 : 80;
  }

  @Override
  public String name() {
    return server.name();
  }

  @Override
  public List<McpSchema.Tool> tools() {
    return server.tools();
  }

  @Override
  public ToolResult call(String tool, Map<String, Object> arguments, CallContext context) {
    SpanBuilder builder =
        tracer
            .spanBuilder(spanNames.computeIfAbsent(tool, t -> "tools/call " + t))
            .setSpanKind(SpanKind.CLIENT)
            .setAttribute(SpanKeys.MCP_METHOD, "tools/call")
            .setAttribute(SpanKeys.OPERATION, "execute_tool")
            .setAttribute(SpanKeys.TOOL, tool)
            .setAttribute(SpanKeys.MCP_SERVER, server.name());
    if (peer) {
      // an agent-to-agent call: the called agent's own spans follow under this one
      builder.setAttribute(SpanKeys.PEER_AGENT, server.name());
    }
    if (host != null) {
      builder.setAttribute(SpanKeys.SERVER_ADDRESS, host).setAttribute(SpanKeys.SERVER_PORT, port);
    }
    Span span = builder.startSpan();
    try (Scope current = span.makeCurrent()) {
      ToolResult result = server.call(tool, arguments, context);
      if (!result.ok()) {
        // the MCP conventions' word for a call answered with isError (or not answered at all)
        span.setAttribute(SpanKeys.ERROR_TYPE, "tool_error");
        span.setStatus(StatusCode.ERROR);
      }
      return result;
    } catch (RuntimeException e) {
      span.setAttribute(SpanKeys.ERROR_TYPE, e.getClass().getSimpleName());
      span.setStatus(StatusCode.ERROR);
      throw e;
    } finally {
      span.end();
    }
  }
}
