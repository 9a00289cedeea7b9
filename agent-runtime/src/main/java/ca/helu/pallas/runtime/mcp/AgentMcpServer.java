package ca.helu.pallas.runtime.mcp;

import ca.helu.pallas.api.CallerLimitsSpec;
import ca.helu.pallas.api.InstanceScope;
import ca.helu.pallas.runtime.auth.Caller;
import ca.helu.pallas.runtime.health.AgentHealth;
import ca.helu.pallas.runtime.health.HealthReport;
import ca.helu.pallas.runtime.http.CallCancels;
import ca.helu.pallas.runtime.http.EdgeLimits;
import ca.helu.pallas.runtime.http.EdgeSessions;
import ca.helu.pallas.runtime.loop.AgentLoop;
import ca.helu.pallas.runtime.loop.Cancellation;
import ca.helu.pallas.runtime.mcp.session.StreamableHttpTransport;
import ca.helu.pallas.runtime.metrics.PallasMetrics;
import ca.helu.pallas.runtime.store.AgentHistories;
import ca.helu.pallas.runtime.store.HistoryBounds;
import ca.helu.pallas.runtime.store.HistoryStore;
import ca.helu.pallas.runtime.store.SessionStores;
import ca.helu.pallas.runtime.store.StoreException;
import ca.helu.pallas.runtime.tracing.Tracing;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.langchain4j.data.message.ChatMessage;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import io.modelcontextprotocol.server.McpAsyncServer;
import io.modelcontextprotocol.server.McpAsyncServerExchange;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.server.transport.DefaultServerTransportSecurityValidator;
import io.modelcontextprotocol.spec.HttpHeaders;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiFunction;
import reactor.core.publisher.Mono;

/**
 * One agent's MCP surface (docs/contract.md, "Each agent"): send_message and the tool named after
 * the agent (both answered by {@link TurnHandler}), get_health, and the {agent}_history prompt,
 * over our Streamable HTTP transport ({@link StreamableHttpTransport}).
 */
public final class AgentMcpServer implements AutoCloseable {
  private static final String SEND_MESSAGE_SCHEMA =
      """
      {"type":"object","properties":{
        "message":{"type":"string","description":"Text message to the agent"},
        "images":{"type":"array","description":"Base64-encoded images (vision models only)",
          "items":{"type":"object","properties":{
            "data":{"type":"string","description":"Base64 image bytes"},
            "mime_type":{"type":"string","enum":["image/png","image/jpeg","image/gif","image/webp"]}},
            "required":["data","mime_type"]}}},
       "required":["message"]}
      """;
  private static final String EMPTY_SCHEMA =
      "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}";

  /** get_health's JSON (docs/contract.md, "get_health"), as its structuredContent. */
  private static final String HEALTH_SCHEMA =
      """
      {"type":"object","properties":{
        "status":{"type":"string","enum":["ok","degraded","error"]},
        "timestamp":{"type":"string","format":"date-time"},
        "message":{"type":"string","description":"What is wrong; only when status is not ok"}},
       "required":["status","timestamp"]}
      """;

  private final String agent;
  private final AgentHealth health;
  private final InstanceScope scope;
  private final HistoryStore store;
  private final PallasMetrics metrics;
  private final Conversations conversations;
  private final StreamableHttpTransport transport;
  private final McpAsyncServer server;
  private final Calls calls;

  /**
   * @param historyChars the most this agent's histories hold together (docs/runtime.md, "Memory")
   * @param conversationChars the most one conversation holds ({@code --history-max-chars})
   * @param store where the histories live (docs/runtime.md, "Conversations")
   * @param turns the turn's deadline, and how often a call's stream is checked for a client that
   *     left
   * @param stores where the agent's MCP sessions and their streams' events are kept, for every
   *     replica (docs/runtime.md, "Sessions")
   * @param callerLimits how much one caller may use the agent (null: no limit)
   * @param tracing where the calls' spans go (docs/observability.md)
   * @param catalog the downstream servers' tools and probes, for the tools and servers resources
   */
  public AgentMcpServer(
      AgentCard card,
      AgentLoop loop,
      InstanceScope scope,
      AgentHealth health,
      PallasMetrics metrics,
      InFlight inFlight,
      List<String> allowedOrigins,
      EdgeLimits limits,
      long historyChars,
      long conversationChars,
      HistoryStore store,
      TurnLimits turns,
      SessionStores stores,
      CallerLimitsSpec callerLimits,
      Tracing tracing,
      ServerCatalog catalog) {
    this.agent = card.name();
    // an agent that keeps histories needs its store (docs/runtime.md, "When the conversation store
    // fails"); one of request scope does not
    this.health =
        scope == InstanceScope.REQUEST
            ? health
            : health.degradedBy("Conversation store: ", store::problem);
    this.scope = scope;
    this.store = store;
    this.metrics = metrics;
    // a history the model could read in full, within the agent's share of the heap
    AgentHistories histories =
        scope == InstanceScope.REQUEST
            ? null
            : store.forAgent(
                agent,
                scope,
                new HistoryBounds(
                    Math.min(
                        conversationChars,
                        Math.min(card.capabilities().contextChars(), historyChars)),
                    historyChars,
                    limits.sessionIdle()));
    this.conversations = new Conversations(scope, histories);
    metrics.histories(
        agent,
        () -> histories == null ? 0 : histories.held(),
        () -> histories == null ? 0 : 2 * histories.chars());
    this.calls = new Calls(turns.heartbeat());
    TurnHandler turnHandler =
        new TurnHandler(
            card,
            loop,
            scope,
            conversations,
            metrics,
            inFlight,
            turns.deadline(),
            CallerLimits.of(agent, callerLimits),
            tracing);
    // the SDK's JSON with the body as its only size limit (a long message is not a parse error)
    var json = new JacksonMcpJsonMapper(new ObjectMapper(limits.jsonFactory()));
    // the one output schema (get_health's) describes JSON this server renders itself, so nothing
    // is validated; this also spares loading the SDK's default JSON-schema library at startup
    JsonSchemaValidator noSchemas =
        (schema, output) -> JsonSchemaValidator.ValidationResponse.asValid(null);
    this.transport =
        new StreamableHttpTransport(
            agent,
            json,
            noSchemas,
            originValidator(allowedOrigins),
            AgentMcpServer::context,
            stores.sessions(),
            stores.events(),
            turns.deadline(),
            limits.maxSessions(),
            limits.sessionIdle(),
            Duration.ofSeconds(30),
            conversations::closed);
    metrics.sessions(agent, transport::sessionCount);

    // the agent's icons on every tool of its own, as on its server info (docs/contract.md, "Each
    // agent"); null rather than empty, so that an agent without icons sends no "icons" at all
    List<McpSchema.Icon> icons = icons(card);
    // a turn reaches outside the agent (its model and the servers it calls)
    McpSchema.ToolAnnotations turn =
        McpSchema.ToolAnnotations.builder().openWorldHint(true).build();
    McpSchema.Tool sendMessage =
        McpSchema.Tool.builder()
            .name("send_message")
            .title("Send a message to " + card.title())
            .description(
                "Send a message (and optional images) to the "
                    + card.title()
                    + ": "
                    + card.description())
            .inputSchema(json, SEND_MESSAGE_SCHEMA)
            .annotations(turn)
            .icons(icons)
            .build();
    McpSchema.Tool agentTool =
        McpSchema.Tool.builder()
            .name(agent)
            .title(card.title())
            .description(card.description())
            .inputSchema(json, SEND_MESSAGE_SCHEMA)
            .annotations(turn)
            .icons(icons)
            .build();
    McpSchema.Tool getHealth =
        McpSchema.Tool.builder()
            .name("get_health")
            .description("Returns the health status of this agent and its downstream dependencies.")
            .inputSchema(json, EMPTY_SCHEMA)
            .outputSchema(json, HEALTH_SCHEMA)
            .annotations(
                McpSchema.ToolAnnotations.builder()
                    .readOnlyHint(true)
                    .destructiveHint(false)
                    .idempotentHint(true)
                    .openWorldHint(false)
                    .build())
            .icons(icons)
            .build();

    List<McpServerFeatures.AsyncToolSpecification> tools = new ArrayList<>();
    tools.add(tool(sendMessage, turnHandler::handle));
    tools.add(tool(agentTool, turnHandler::handle));
    tools.add(
        tool(
            getHealth,
            (exchange, request) -> turnHandler.inSpan(exchange, request, this::getHealth)));
    AgentResources resources =
        new AgentResources(
            card,
            this.health,
            this::healthNow,
            scope == InstanceScope.REQUEST ? null : this::historyMessages,
            json,
            tools.stream().map(McpServerFeatures.AsyncToolSpecification::tool).toList(),
            catalog);

    var spec =
        McpServer.async(transport)
            .serverInfo(
                McpSchema.Implementation.builder(agent, card.version())
                    .title(card.title())
                    .description(card.description())
                    .icons(icons)
                    .build())
            .jsonMapper(json)
            .validateToolInputs(false)
            .jsonSchemaValidator(noSchemas)
            .instructions(card.description())
            .tools(tools)
            .resources(resources.specifications());
    if (scope != InstanceScope.REQUEST) {
      McpSchema.Prompt prompt =
          new McpSchema.Prompt(
              agent + "_history",
              "Conversation history of " + card.title(),
              "The conversation with " + card.title() + " so far",
              List.of());
      spec.prompts(
          new McpServerFeatures.AsyncPromptSpecification(
              prompt,
              (exchange, request) ->
                  Mono.fromSupplier(() ->
                      new McpSchema.GetPromptResult(
                          "Conversation history of " + agent, historyMessages(exchange)))));
    }
    // prompts are always a capability: a request-scope agent lists none rather than failing
    // resources: health, which a client may subscribe to (docs/contract.md, "Resources")
    spec.capabilities(
        McpSchema.ServerCapabilities.builder()
            .tools(false)
            .prompts(false)
            .resources(true, false)
            .build());
    this.server = spec.build();
    resources.start(server);
    // the gauge follows every check's result, not only get_health calls (docs/metrics.md): an
    // agent nobody asks still shows its health, and its alert fires
    metrics.healthStatus(agent, health.current().gaugeValue());
    health.watch(flipped -> metrics.healthStatus(agent, health.current().gaugeValue()));
  }

  /**
   * The caller's bearer token in a call's transport context (its Authorization header), if any: the
   * token the registry's call_tool passes on.
   */
  public static Optional<String> bearer(McpAsyncServerExchange exchange) {
    return TurnHandler.bearer(exchange);
  }

  /**
   * What a request gives the tool handlers: its Authorization header, its caller, its trace
   * context, its cancellation (the registry's handlers get the same).
   */
  public static McpTransportContext context(HttpServletRequest request) {
    Map<String, Object> context = new HashMap<>(4);
    Caller caller = request.getAttribute(Caller.ATTRIBUTE) instanceof Caller c ? c : null;
    String auth = request.getHeader("Authorization");
    // the caller's own token, for the servers that take it (forwarded or exchanged); an agent of
    // the fleet calling for its caller presents its own identity, which goes nowhere further
    // (docs/runtime.md, "Agents calling agents")
    if (auth != null && (caller == null || caller.via() == null)) {
      context.put(TurnHandler.AUTHORIZATION, auth);
    }
    // who calls, as the edge authenticated it (docs/runtime.md, "Inbound authentication")
    if (caller != null) {
      context.put(TurnHandler.CALLER, caller);
    }
    // the caller's trace context (docs/observability.md, "Context propagation")
    String traceparent = request.getHeader("traceparent");
    if (traceparent != null) {
      context.put(TurnHandler.TRACEPARENT, traceparent);
      String tracestate = request.getHeader("tracestate");
      if (tracestate != null) {
        context.put(TurnHandler.TRACESTATE, tracestate);
      }
    }
    // the call's cancellation, for the tool handler (docs/runtime.md, "Deadlines and
    // cancellation"): the SDK gives a handler no JSON-RPC id to be cancelled by
    if (request.getAttribute(Calls.ATTRIBUTE) instanceof Cancellation call) {
      context.put(TurnHandler.CANCELLATION, call);
    }
    return context.isEmpty() ? McpTransportContext.EMPTY : McpTransportContext.create(context);
  }

  /**
   * DNS-rebinding protection: a browser always sends Origin, so an Origin that is not localhost or
   * explicitly allowed is refused (403). Host is not restricted, so in-cluster Service names and
   * ingress hosts work; non-browser clients send no Origin.
   */
  public static DefaultServerTransportSecurityValidator originValidator(List<String> extraOrigins) {
    List<String> origins = new ArrayList<>();
    for (String scheme : List.of("http://", "https://")) {
      for (String host : List.of("localhost", "127.0.0.1", "[::1]")) {
        origins.add(scheme + host);
        origins.add(scheme + host + ":*");
      }
    }
    origins.addAll(extraOrigins);
    return DefaultServerTransportSecurityValidator.builder().allowedOrigins(origins).build();
  }

  /** The agent's icons in the SDK's type, or null when it has none. */
  private static List<McpSchema.Icon> icons(AgentCard card) {
    if (card.icons().isEmpty()) {
      return null;
    }
    return card.icons().stream()
        .map(i -> McpSchema.Icon.builder(i.src()).mimeType(i.mimeType()).sizes(i.sizes()).build())
        .toList();
  }

  private static McpServerFeatures.AsyncToolSpecification tool(
      McpSchema.Tool tool,
      BiFunction<McpAsyncServerExchange, McpSchema.CallToolRequest, Mono<McpSchema.CallToolResult>>
          handler) {
    return McpServerFeatures.AsyncToolSpecification.builder()
        .tool(tool)
        .callHandler(handler)
        .build();
  }

  /** The calls in flight, for the edge to cancel. */
  public CallCancels calls() {
    return calls;
  }

  /** Room for new sessions, for the edge to keep the cap. */
  public EdgeSessions sessions() {
    return transport.sessions();
  }

  /** Ends the GET streams clients listen on (StreamableHttpTransport#endListeningStreams). */
  public void endListeningStreams() {
    transport.endListeningStreams();
  }

  /** Whether this agent has a resource of {@code uri} (HttpHost.Builder#resources). */
  public boolean hasResource(String uri) {
    return hasResource(server, uri);
  }

  /** Whether {@code server} has a resource of {@code uri} now (its resources may change). */
  public static boolean hasResource(McpAsyncServer server, String uri) {
    return uri != null
        && Boolean.TRUE.equals(server.listResources().any(r -> r.uri().equals(uri)).block());
  }

  /**
   * The servlet that serves /mcp: the SDK's transport, noting when each session was last used,
   * registering each request in flight with its session and JSON-RPC id (so that it can be
   * cancelled, and its stream gets heartbeats), and, on a deleted session, stopping its calls and
   * forgetting its history.
   */
  public HttpServlet servlet() {
    return new HttpServlet() {
      @Override
      public void service(ServletRequest req, ServletResponse res) throws IOException {
        var request = (HttpServletRequest) req;
        var response = (HttpServletResponse) res;
        String session = request.getHeader(HttpHeaders.MCP_SESSION_ID);
        if (session != null && request.getAttribute(CallCancels.REQUEST_ID) instanceof String id) {
          // a resumable stream's call goes on when its client's connection breaks: the client
          // comes back for the rest (docs/runtime.md, "Sessions")
          boolean stopOnDisconnect = !transport.resumable(session);
          try (Calls.Open call = calls.open(session, id, request, response, stopOnDisconnect)) {
            transport.service(request, call.response());
          }
        } else {
          transport.service(request, response);
        }
        if (request.getMethod().equals("DELETE") && session != null && response.getStatus() < 400) {
          calls.sessionDeleted(session);
          conversations.forget(session);
        }
      }
    };
  }

  /** get_health's answer, which the health resource returns too; sets the health gauge. */
  private HealthReport healthNow() {
    HealthReport report = health.report();
    metrics.healthStatus(agent, report.gaugeValue());
    return report;
  }

  private McpSchema.CallToolResult getHealth() {
    HealthReport report = healthNow();
    // the text block stays for the seed contract (Daedalus parses it); structuredContent is the
    // same JSON, for clients that read the tool's outputSchema (docs/contract.md, "get_health")
    return McpSchema.CallToolResult.builder()
        .addTextContent(report.json())
        .structuredContent(report.fields())
        .isError(false)
        .build();
  }

  /**
   * The caller's conversation, for the history prompt and resource: this session's, or a shared
   * agent's one (the caller's own with inbound authentication).
   */
  private List<McpSchema.PromptMessage> historyMessages(McpAsyncServerExchange exchange) {
    List<ChatMessage> history;
    try {
      history = conversations.existing(exchange.sessionId(), TurnHandler.caller(exchange));
    } catch (StoreException e) {
      // a JSON-RPC error naming the store, never a partial history (docs/runtime.md, "When the
      // conversation store fails")
      throw new McpError(
          new McpSchema.JSONRPCResponse.JSONRPCError(
              McpSchema.ErrorCodes.INTERNAL_ERROR,
              "agent '" + agent + "' cannot read its conversation history now: " + e.getMessage(),
              null));
    }
    return McpMessages.promptMessages(history);
  }

  @Override
  public void close() {
    server.closeGracefully().block(Duration.ofSeconds(5));
  }
}
