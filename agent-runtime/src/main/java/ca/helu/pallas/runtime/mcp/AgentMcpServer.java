package ca.helu.pallas.runtime.mcp;

import ca.helu.pallas.api.InstanceScope;
import ca.helu.pallas.runtime.http.HttpHost;
import ca.helu.pallas.runtime.http.McpEdgeFilter;
import ca.helu.pallas.runtime.loop.AgentLoop;
import ca.helu.pallas.runtime.loop.CallContext;
import ca.helu.pallas.runtime.loop.Conversation;
import ca.helu.pallas.runtime.loop.TurnResult;
import ca.helu.pallas.runtime.metrics.PallasMetrics;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.Content;
import dev.langchain4j.data.message.ImageContent;
import dev.langchain4j.data.message.TextContent;
import dev.langchain4j.data.message.UserMessage;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import io.modelcontextprotocol.server.McpAsyncServer;
import io.modelcontextprotocol.server.McpAsyncServerExchange;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.server.transport.DefaultServerTransportSecurityValidator;
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider;
import io.modelcontextprotocol.spec.HttpHeaders;
import io.modelcontextprotocol.spec.McpSchema;
import jakarta.servlet.ServletConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * One agent's MCP surface (DESIGN 4.2): send_message and the tool named after the agent,
 * get_health, and the {agent}_history prompt, over the SDK's Streamable HTTP servlet transport.
 */
public final class AgentMcpServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(AgentMcpServer.class);

  /** Where a call's turn runs: virtual threads, so a slow LLM never holds an I/O thread. */
  private static final Scheduler CALLS =
      Schedulers.fromExecutorService(Executors.newVirtualThreadPerTaskExecutor(), "pallas-calls");

  static final String AUTHORIZATION = "authorization";

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

  private final String agent;
  private final AgentLoop loop;
  private final boolean vision;
  private final InstanceScope scope;
  private final Supplier<HealthReport> health;
  private final PallasMetrics metrics;
  private final InFlight inFlight;
  private final Conversations conversations;
  private final int maxMessageChars;

  private final HttpServletStreamableServerTransportProvider transport;
  private final McpAsyncServer server;

  public AgentMcpServer(
      AgentCard card,
      AgentLoop loop,
      InstanceScope scope,
      Supplier<HealthReport> health,
      PallasMetrics metrics,
      InFlight inFlight,
      List<String> allowedOrigins) {
    this.agent = card.name();
    this.loop = loop;
    this.vision = card.capabilities().vision();
    this.scope = scope;
    this.health = health;
    this.metrics = metrics;
    this.inFlight = inFlight;
    // a history the model could read in full
    this.conversations = new Conversations(scope, card.capabilities().contextChars());
    metrics.histories(agent, conversations::sessions, () -> 2 * conversations.chars());
    // the SDK's JSON with the body as its only size limit (a long message is not a parse error)
    var json = new JacksonMcpJsonMapper(new ObjectMapper(McpEdgeFilter.jsonFactory()));
    this.maxMessageChars =
        (int) Math.min(SendMessageArgs.MAX_MESSAGE_CHARS, card.capabilities().contextChars());
    this.transport =
        HttpServletStreamableServerTransportProvider.builder()
            .jsonMapper(json)
            .mcpEndpoint("/mcp")
            .maxRequestSize((int) HttpHost.MAX_BODY_BYTES)
            .keepAliveInterval(Duration.ofSeconds(30))
            .securityValidator(originValidator(allowedOrigins))
            .contextExtractor(request -> {
              String auth = request.getHeader("Authorization");
              return auth == null
                  ? McpTransportContext.EMPTY
                  : McpTransportContext.create(Map.of(AUTHORIZATION, auth));
            })
            .build();

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
            .build();
    McpSchema.Tool agentTool =
        McpSchema.Tool.builder()
            .name(agent)
            .title(card.title())
            .description(card.description())
            .inputSchema(json, SEND_MESSAGE_SCHEMA)
            .build();
    McpSchema.Tool getHealth =
        McpSchema.Tool.builder()
            .name("get_health")
            .description("Returns the health status of this agent and its downstream dependencies.")
            .inputSchema(json, EMPTY_SCHEMA)
            .build();

    List<McpServerFeatures.AsyncToolSpecification> tools = new ArrayList<>();
    tools.add(tool(sendMessage, this::sendMessage));
    tools.add(tool(agentTool, this::sendMessage));
    tools.add(tool(getHealth, (exchange, request) -> Mono.fromSupplier(() -> getHealth(request))));

    var spec =
        McpServer.async(transport)
            .serverInfo(agent, card.version())
            .jsonMapper(json)
            .validateToolInputs(false)
            // our tools declare no output schema, so nothing is ever validated; this also spares
            // loading the SDK's default JSON-schema library at startup
            .jsonSchemaValidator(
                (schema, output) -> JsonSchemaValidator.ValidationResponse.asValid(null))
            .instructions(card.description())
            .tools(tools);
    if (scope != InstanceScope.REQUEST) {
      McpSchema.Prompt prompt =
          new McpSchema.Prompt(
              agent + "_history",
              "Conversation history of " + card.title(),
              "The conversation with " + card.title() + " so far",
              List.of());
      spec.prompts(
          new McpServerFeatures.AsyncPromptSpecification(
              prompt, (exchange, request) -> Mono.fromSupplier(() -> history(exchange))));
    }
    // prompts are always a capability: a request-scope agent lists none rather than failing
    spec.capabilities(McpSchema.ServerCapabilities.builder().tools(false).prompts(false).build());
    this.server = spec.build();
  }

  /**
   * DNS-rebinding protection: a browser always sends Origin, so an Origin that is not localhost or
   * explicitly allowed is refused (403). Host is not restricted, so in-cluster Service names and
   * ingress hosts work; non-browser clients send no Origin.
   */
  static DefaultServerTransportSecurityValidator originValidator(List<String> extraOrigins) {
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

  private static McpServerFeatures.AsyncToolSpecification tool(
      McpSchema.Tool tool,
      BiFunction<McpAsyncServerExchange, McpSchema.CallToolRequest, Mono<McpSchema.CallToolResult>>
          handler) {
    return McpServerFeatures.AsyncToolSpecification.builder()
        .tool(tool)
        .callHandler(handler)
        .build();
  }

  /** The servlet that serves /mcp: the SDK's transport, forgetting a deleted session's history. */
  public HttpServlet servlet() {
    return new HttpServlet() {
      @Override
      public void init(ServletConfig config) throws ServletException {
        super.init(config);
        transport.init(config);
      }

      @Override
      public void service(ServletRequest req, ServletResponse res)
          throws ServletException, IOException {
        transport.service(req, res);
        var request = (HttpServletRequest) req;
        var response = (HttpServletResponse) res;
        String session = request.getHeader(HttpHeaders.MCP_SESSION_ID);
        if (request.getMethod().equals("DELETE") && session != null && response.getStatus() < 400) {
          conversations.forget(session);
        }
      }

      @Override
      public void destroy() {
        transport.destroy();
      }
    };
  }

  private Mono<McpSchema.CallToolResult> sendMessage(
      McpAsyncServerExchange exchange, McpSchema.CallToolRequest request) {
    Mono<McpSchema.CallToolResult> turn =
        Mono.fromCallable(() -> runTurn(exchange, request)).subscribeOn(CALLS);
    // at the drain deadline a call still queued or running is answered, not cut off
    Mono<McpSchema.CallToolResult> shutdown =
        inFlight
            .expiry()
            .then(
                Mono.fromCallable(() -> {
                  metrics.sendMessage(agent, false, Duration.ZERO);
                  return error(
                      "agent '"
                          + agent
                          + "' is shutting down and could not finish this call; retry on another"
                          + " replica");
                }));
    return Mono.firstWithSignal(turn, shutdown);
  }

  private McpSchema.CallToolResult runTurn(
      McpAsyncServerExchange exchange, McpSchema.CallToolRequest request) {
    long start = System.nanoTime();
    String requestId = UUID.randomUUID().toString().substring(0, 8);
    MDC.put("agent", agent);
    MDC.put("request_id", requestId);
    boolean ok = false;
    if (!inFlight.enter()) {
      metrics.sendMessage(agent, false, Duration.ofNanos(System.nanoTime() - start));
      MDC.clear();
      return error("agent '" + agent + "' is shutting down; retry on another replica");
    }
    try {
      SendMessageArgs args;
      try {
        args = SendMessageArgs.parse(request.arguments(), vision, agent, maxMessageChars);
      } catch (SendMessageArgs.InvalidArguments e) {
        return error("invalid arguments: " + e.getMessage());
      }
      CallContext ctx =
          new CallContext(
              requestId,
              bearer(exchange),
              McpProgress.forCall(exchange, request.progressToken(), agent));
      UserMessage user = userMessage(args);
      TurnResult result;
      if (scope == InstanceScope.REQUEST) {
        result = loop.run(List.of(), user, ctx);
      } else {
        Conversation conversation = conversations.forCall(exchange.sessionId());
        int ahead = conversation.waiting();
        if (ahead > 0) {
          ctx.progress()
              .relay(
                  agent
                      + " is answering "
                      + ahead
                      + (ahead == 1 ? " call" : " calls")
                      + " of this conversation first; waiting",
                  false);
        }
        long queued = System.nanoTime();
        result =
            conversation.exclusive(() -> {
              metrics.queueWait(agent, Duration.ofNanos(System.nanoTime() - queued));
              TurnResult r = loop.run(conversation.snapshot(), user, ctx);
              if (r.ok()) {
                conversations.appended(
                    exchange.sessionId(), conversation, conversation.append(r.messages()));
              }
              return r;
            });
      }
      ok = result.ok();
      return ok
          ? McpSchema.CallToolResult.builder().addTextContent(result.text()).isError(false).build()
          : error(result.text());
    } catch (RuntimeException e) {
      LOG.error("send_message failed", e);
      return error("internal error in agent '" + agent + "' (request " + requestId + ")");
    } finally {
      metrics.sendMessage(agent, ok, Duration.ofNanos(System.nanoTime() - start));
      inFlight.exit();
      MDC.clear();
    }
  }

  private static Optional<String> bearer(McpAsyncServerExchange exchange) {
    Object auth = exchange.transportContext().get(AUTHORIZATION);
    if (auth instanceof String header && header.regionMatches(true, 0, "Bearer ", 0, 7)) {
      String token = header.substring(7).strip();
      return token.isEmpty() ? Optional.empty() : Optional.of(token);
    }
    return Optional.empty();
  }

  private static UserMessage userMessage(SendMessageArgs args) {
    if (args.images().isEmpty()) {
      return UserMessage.from(args.message());
    }
    List<Content> parts = new ArrayList<>();
    parts.add(TextContent.from(args.message()));
    for (SendMessageArgs.Image image : args.images()) {
      parts.add(ImageContent.from(image.base64(), image.mimeType()));
    }
    return UserMessage.from(parts);
  }

  private McpSchema.CallToolResult getHealth(McpSchema.CallToolRequest request) {
    HealthReport report = health.get();
    metrics.healthStatus(agent, report.gaugeValue());
    return McpSchema.CallToolResult.builder().addTextContent(report.json()).isError(false).build();
  }

  private McpSchema.GetPromptResult history(McpAsyncServerExchange exchange) {
    List<McpSchema.PromptMessage> messages = new ArrayList<>();
    conversations
        .existing(exchange.sessionId())
        .ifPresent(c -> c.snapshot().forEach(m -> toPrompt(m, messages)));
    return new McpSchema.GetPromptResult("Conversation history of " + agent, messages);
  }

  /** User messages and the assistant's text answers; tool traffic stays internal. */
  private static void toPrompt(ChatMessage message, List<McpSchema.PromptMessage> out) {
    if (message instanceof UserMessage user) {
      for (Content part : user.contents()) {
        if (part instanceof TextContent text) {
          out.add(
              new McpSchema.PromptMessage(
                  McpSchema.Role.USER, new McpSchema.TextContent(text.text())));
        } else if (part instanceof ImageContent image && image.image().base64Data() != null) {
          out.add(
              new McpSchema.PromptMessage(
                  McpSchema.Role.USER,
                  new McpSchema.ImageContent(
                      null, image.image().base64Data(), image.image().mimeType())));
        }
      }
    } else if (message instanceof AiMessage ai
        && !ai.hasToolExecutionRequests()
        && ai.text() != null) {
      out.add(
          new McpSchema.PromptMessage(
              McpSchema.Role.ASSISTANT, new McpSchema.TextContent(ai.text())));
    }
  }

  private static McpSchema.CallToolResult error(String message) {
    return McpSchema.CallToolResult.builder().addTextContent(message).isError(true).build();
  }

  @Override
  public void close() {
    server.closeGracefully().block(Duration.ofSeconds(5));
  }
}
