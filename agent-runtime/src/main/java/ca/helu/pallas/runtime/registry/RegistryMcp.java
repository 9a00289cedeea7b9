package ca.helu.pallas.runtime.registry;

import ca.helu.pallas.runtime.downstream.Credentials;
import ca.helu.pallas.runtime.health.HealthMonitor;
import ca.helu.pallas.runtime.http.EdgeLimits;
import ca.helu.pallas.runtime.http.EdgeSessions;
import ca.helu.pallas.runtime.loop.CallContext;
import ca.helu.pallas.runtime.loop.Cancellation;
import ca.helu.pallas.runtime.mcp.AgentMcpServer;
import ca.helu.pallas.runtime.mcp.session.StreamableHttpTransport;
import ca.helu.pallas.runtime.store.SessionStores;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import io.modelcontextprotocol.server.McpAsyncServer;
import io.modelcontextprotocol.server.McpAsyncServerExchange;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.spec.HttpHeaders;
import io.modelcontextprotocol.spec.McpSchema;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The registry's MCP endpoint (docs/contract.md, "The registry's MCP endpoint"; docs/runtime.md):
 * tools find_tools, get_schema, call_tool and list_servers over the {@link FleetIndex}, and each
 * agent's health as the resource {@code pallas://agents/{agent}/health}, which one subscription per
 * agent watches from here. Served by the agents' own transport ({@link StreamableHttpTransport})
 * behind the agents' own edge (http.HttpHost).
 */
final class RegistryMcp implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RegistryMcp.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Scheduler CALLS =
      Schedulers.fromExecutorService(
          Executors.newThreadPerTaskExecutor(
              Thread.ofVirtual().name("pallas-registry-", 0).factory()),
          "pallas-registry");

  /** The tools a client without a token may call with openHealth: they only tell. */
  static final Set<String> OPEN_TOOLS = Set.of("find_tools", "get_schema", "list_servers");

  /**
   * How the registry follows its agents: each request's timeout, the interval of the pings that
   * time each agent and find a lost session, and what its requests to each agent carry (the
   * registry's identity with inbound authentication, docs/runtime.md, "Agents calling agents").
   */
  record Links(Duration timeout, Duration interval, Function<String, Credentials> credentials) {
    static final Links DEFAULT =
        new Links(Duration.ofSeconds(3), Duration.ofSeconds(15), agent -> Credentials.NONE);
  }

  static final int DEFAULT_HITS = 5;
  static final int MAX_HITS = 50;
  static final int MAX_QUERIES = 20;

  /** How long a first question waits for the links opened by the first session. */
  static final Duration FIRST_READ = Duration.ofSeconds(10);

  private static final String FIND_TOOLS_SCHEMA =
      """
      {"type":"object","properties":{
        "query":{"type":"string","description":"What you want done, in a few words, e.g. 'add two numbers'"},
        "queries":{"type":"array","items":{"type":"string"},"maxItems":20,
          "description":"Several intents at once: one list of hits per intent"},
        "limit":{"type":"integer","minimum":1,"maximum":50,"description":"Hits per intent (default 5)"}},
       "additionalProperties":false}
      """;
  private static final String NAME_SCHEMA =
      """
      {"type":"object","properties":{
        "name":{"type":"string","description":"The tool's fully qualified name, {agent or server}/{tool}, as find_tools gives it"}},
       "required":["name"],"additionalProperties":false}
      """;
  private static final String CALL_SCHEMA =
      """
      {"type":"object","properties":{
        "name":{"type":"string","description":"The tool's fully qualified name, {agent or server}/{tool}, as find_tools gives it"},
        "arguments":{"type":"object","description":"The tool's arguments, as its get_schema inputSchema describes them"}},
       "required":["name"],"additionalProperties":false}
      """;
  private static final String EMPTY_SCHEMA =
      "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}";

  private final FleetIndex index;
  private final ToolCalls calls;
  private final StreamableHttpTransport transport;
  private final ObjectMapper mapper;
  private final JacksonMcpJsonMapper json;
  private final McpAsyncServer server;
  private final Set<String> resources = new HashSet<>(); // guarded by this

  /**
   * @param version the fleet's, on the server info
   * @param links each agent link's request timeout and ping interval
   * @param allowedOrigins browser origins allowed besides localhost
   * @param limits the edge's, as the agents': its sessions' bounds and its JSON
   */
  RegistryMcp(
      String version,
      Links links,
      ToolCalls calls,
      List<String> allowedOrigins,
      EdgeLimits limits) {
    this.calls = calls;
    this.index =
        new FleetIndex(
            links.timeout(),
            links.interval(),
            links.credentials(),
            this::healthChanged,
            this::agentsChanged);
    this.mapper = new ObjectMapper(limits.jsonFactory());
    this.json = new JacksonMcpJsonMapper(mapper);
    JsonSchemaValidator noSchemas =
        (schema, output) -> JsonSchemaValidator.ValidationResponse.asValid(null);
    SessionStores stores = SessionStores.inMemory();
    this.transport =
        new StreamableHttpTransport(
            "registry",
            json,
            noSchemas,
            AgentMcpServer.originValidator(allowedOrigins),
            AgentMcpServer::context,
            stores.sessions(),
            stores.events(),
            Duration.ofMinutes(10),
            limits.maxSessions(),
            limits.sessionIdle(),
            Duration.ofSeconds(30),
            session -> {});
    McpSchema.ToolAnnotations tells =
        McpSchema.ToolAnnotations.builder()
            .readOnlyHint(true)
            .destructiveHint(false)
            .idempotentHint(true)
            .openWorldHint(false)
            .build();
    List<McpServerFeatures.AsyncToolSpecification> tools =
        List.of(
            telling(
                McpSchema.Tool.builder()
                    .name("find_tools")
                    .title("Find tools by intent")
                    .description(
                        "Finds the tools of every agent and MCP server of the fleet that fit what"
                            + " you want done, best first: give a query of a few words, or several"
                            + " queries at once. Each hit has the fully qualified name get_schema"
                            + " and call_tool take.")
                    .inputSchema(json, FIND_TOOLS_SCHEMA)
                    .annotations(tells)
                    .build(),
                this::findTools),
            telling(
                McpSchema.Tool.builder()
                    .name("get_schema")
                    .title("A tool's schema")
                    .description(
                        "The full definition of one tool of the fleet (its inputSchema among it),"
                            + " by the fully qualified name find_tools gave.")
                    .inputSchema(json, NAME_SCHEMA)
                    .annotations(tells)
                    .build(),
                this::getSchema),
            calling(
                McpSchema.Tool.builder()
                    .name("call_tool")
                    .title("Call a tool of the fleet")
                    .description(
                        "Calls one tool of any agent or MCP server of the fleet through the"
                            + " registry, by its fully qualified name, and gives its result as the"
                            + " tool answered. Progress is relayed.")
                    .inputSchema(json, CALL_SCHEMA)
                    .annotations(McpSchema.ToolAnnotations.builder().openWorldHint(true).build())
                    .build(),
                this::callTool),
            telling(
                McpSchema.Tool.builder()
                    .name("list_servers")
                    .title("The fleet's agents and servers")
                    .description(
                        "Every agent and downstream MCP server of the fleet with its health and"
                            + " the latency of its last probe.")
                    .inputSchema(json, EMPTY_SCHEMA)
                    .annotations(tells)
                    .build(),
                this::listServers));
    this.server =
        McpServer.async(transport)
            .serverInfo(
                McpSchema.Implementation.builder("pallas-registry", version)
                    .title("Pallas registry")
                    .description(
                        "Finds and calls the tools of every agent and MCP server of the fleet;"
                            + " each agent's health as a resource")
                    .build())
            .jsonMapper(json)
            .validateToolInputs(false)
            .jsonSchemaValidator(noSchemas)
            .instructions(
                "Use find_tools with a few words of what you want done, then call_tool with the"
                    + " name of the hit (get_schema when you need its arguments).")
            .tools(tools)
            .capabilities(
                McpSchema.ServerCapabilities.builder().tools(false).resources(true, true).build())
            .build();
    agentsChanged();
  }

  /** The fleet's agents and their MCP URLs, from now on. */
  void follow(List<FleetIndex.Target> targets) {
    index.follow(targets);
  }

  FleetIndex index() {
    return index;
  }

  EdgeSessions sessions() {
    return transport.sessions();
  }

  /** Whether the registry has a resource of {@code uri}: one of its agents' (HttpHost.Builder). */
  boolean hasResource(String uri) {
    return AgentMcpServer.hasResource(server, uri);
  }

  /** The servlet of /mcp: a new session opens the index's links to the agents. */
  HttpServlet servlet() {
    return new HttpServlet() {
      @Override
      public void service(ServletRequest req, ServletResponse res) throws IOException {
        var request = (HttpServletRequest) req;
        if (request.getHeader(HttpHeaders.MCP_SESSION_ID) == null) {
          index.activate();
        }
        transport.service(request, (HttpServletResponse) res);
      }
    };
  }

  /** Agents were added or removed: their health resources follow. */
  private void agentsChanged() {
    if (server == null) {
      return; // the constructor publishes the first set
    }
    Set<String> now = new HashSet<>();
    List<McpServerFeatures.AsyncResourceSpecification> added = new ArrayList<>();
    List<String> removed = new ArrayList<>();
    synchronized (this) {
      for (FleetIndex.Target target : index.targets()) {
        String uri = healthUri(target.agent());
        now.add(uri);
        if (resources.add(uri)) {
          added.add(healthResource(target.agent(), uri));
        }
      }
      for (String uri : List.copyOf(resources)) {
        if (!now.contains(uri)) {
          resources.remove(uri);
          removed.add(uri);
        }
      }
    }
    added.forEach(spec -> server.addResource(spec).block());
    removed.forEach(uri -> server.removeResource(uri).block());
  }

  private McpServerFeatures.AsyncResourceSpecification healthResource(String agent, String uri) {
    return new McpServerFeatures.AsyncResourceSpecification(
        McpSchema.Resource.builder(uri, agent + " health")
            .title("Health of agent " + agent)
            .description(
                "The agent's get_health JSON as the registry follows it; subscribe to be told when"
                    + " it changes")
            .mimeType("application/json")
            .build(),
        (exchange, request) ->
            Mono.fromCallable(
                    () -> {
                      awaitFirst();
                      String text =
                          index
                              .link(agent)
                              .map(AgentLink::health)
                              .orElseGet(() ->
                                  HealthMonitor.render(
                                          "error", "agent " + agent + " is not followed")
                                      .json());
                      return new McpSchema.ReadResourceResult(
                          List.of(
                              new McpSchema.TextResourceContents(uri, "application/json", text)));
                    })
                .subscribeOn(CALLS));
  }

  static String healthUri(String agent) {
    return "pallas://agents/" + agent + "/health";
  }

  private void healthChanged(String agent) {
    if (server == null) {
      return;
    }
    String uri = healthUri(agent);
    server
        .notifyResourcesUpdated(new McpSchema.ResourcesUpdatedNotification(uri, null))
        .subscribe(
            done -> {}, e -> LOG.debug("telling subscribers of {} failed: {}", uri, e.toString()));
  }

  private void awaitFirst() {
    index.activate();
    try {
      index.awaitFirst(FIRST_READ);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private McpSchema.CallToolResult findTools(
      McpAsyncServerExchange exchange, Map<String, Object> args) {
    List<String> queries = new ArrayList<>();
    if (args.get("query") instanceof String q && !q.isBlank()) {
      queries.add(q);
    } else if (args.get("query") != null) {
      return error("find_tools: query must be a string of a few words");
    }
    if (args.get("queries") instanceof List<?> list) {
      for (Object q : list) {
        if (!(q instanceof String s) || s.isBlank()) {
          return error("find_tools: queries must be a list of strings");
        }
        queries.add(s);
      }
    } else if (args.get("queries") != null) {
      return error("find_tools: queries must be a list of strings");
    }
    if (queries.isEmpty()) {
      return error("find_tools needs a query (or queries): a few words of what you want done");
    }
    if (queries.size() > MAX_QUERIES) {
      return error("find_tools takes at most " + MAX_QUERIES + " queries at once");
    }
    int limit = DEFAULT_HITS;
    if (args.get("limit") != null) {
      if (!(args.get("limit") instanceof Number n)
          || n.doubleValue() != Math.rint(n.doubleValue())
          || n.intValue() < 1
          || n.intValue() > MAX_HITS) {
        return error("find_tools: limit must be a whole number from 1 to " + MAX_HITS);
      }
      limit = n.intValue();
    }
    awaitFirst();
    ToolSearch search = index.search();
    ObjectNode answer = JSON.createObjectNode();
    ArrayNode results = answer.putArray("results");
    for (String query : queries) {
      ObjectNode result = results.addObject();
      result.put("query", query);
      ArrayNode hits = result.putArray("hits");
      for (ToolSearch.Hit hit : search.find(query, limit)) {
        IndexedTool t = hit.tool();
        ObjectNode h = hits.addObject();
        h.put("name", t.name());
        h.put(t.kind(), t.owner());
        h.put("tool", t.toolName());
        if (t.tool().hasNonNull("title")) {
          h.put("title", t.tool().get("title").asText());
        }
        h.put("description", t.description());
        h.put("score", Math.round(hit.score() * 1000) / 1000.0);
      }
    }
    answer.put("indexedTools", search.size());
    return json(answer);
  }

  private McpSchema.CallToolResult getSchema(
      McpAsyncServerExchange exchange, Map<String, Object> args) {
    if (!(args.get("name") instanceof String name)) {
      return error("get_schema needs name: a fully qualified tool name, as find_tools gives it");
    }
    awaitFirst();
    return index
        .tool(name)
        .map(t -> {
          ObjectNode answer = JSON.createObjectNode();
          answer.put("name", t.name());
          answer.put(t.kind(), t.owner());
          answer.set("tool", t.tool());
          return json(answer);
        })
        .orElseGet(() -> unknown(name));
  }

  private McpSchema.CallToolResult callTool(
      McpAsyncServerExchange exchange, Map<String, Object> args, Object progressToken) {
    if (!(args.get("name") instanceof String name)) {
      return error("call_tool needs name: a fully qualified tool name, as find_tools gives it");
    }
    Object arguments = args.get("arguments");
    if (arguments != null && !(arguments instanceof Map<?, ?>)) {
      return error("call_tool: arguments must be an object");
    }
    awaitFirst();
    IndexedTool tool = index.tool(name).orElse(null);
    if (tool == null) {
      return unknown(name);
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> toolArgs = arguments == null ? Map.of() : (Map<String, Object>) arguments;
    CallContext context =
        new CallContext(
            Integer.toHexString(System.identityHashCode(exchange)),
            AgentMcpServer.bearer(exchange),
            RelayedProgress.forCall(exchange, progressToken),
            new Cancellation());
    return calls.call(tool, toolArgs, context);
  }

  private McpSchema.CallToolResult listServers(
      McpAsyncServerExchange exchange, Map<String, Object> args) {
    awaitFirst();
    ObjectNode answer = JSON.createObjectNode();
    ArrayNode servers = answer.putArray("servers");
    // each downstream server: its most recent probe of any agent that calls it
    Map<String, JsonNode> probes = new LinkedHashMap<>();
    Map<String, List<String>> usedBy = new LinkedHashMap<>();
    Map<String, Integer> toolCounts = new LinkedHashMap<>();
    for (AgentLink link : index.links()) {
      ObjectNode agent = servers.addObject();
      agent.put("name", link.agent());
      agent.put("kind", IndexedTool.AGENT);
      JsonNode health = parse(link.health());
      agent.put("status", link.problem() == null ? health.path("status").asText() : "unreachable");
      if (link.latency() != null) {
        agent.put("latencyMs", millis(link.latency()));
      }
      if (link.checkedAt() != null) {
        agent.put("checkedAt", link.checkedAt().truncatedTo(ChronoUnit.MILLIS).toString());
      }
      if (health.hasNonNull("message")) {
        agent.put("message", health.get("message").asText());
      }
      JsonNode tools = link.tools();
      agent.put("tools", tools == null ? 0 : tools.path("tools").size());
      if (tools != null) {
        for (JsonNode server : tools.path("servers")) {
          toolCounts.merge(server.path("name").asText(), server.path("tools").size(), Math::max);
        }
      }
      JsonNode resource = link.servers();
      if (resource != null) {
        for (JsonNode probe : resource.path("servers")) {
          String name = probe.path("name").asText();
          usedBy.computeIfAbsent(name, k -> new ArrayList<>()).add(link.agent());
          JsonNode held = probes.get(name);
          if (held == null
              || probe.path("checkedAt").asText("").compareTo(held.path("checkedAt").asText(""))
                  > 0) {
            probes.put(name, probe);
          }
        }
      }
    }
    for (Map.Entry<String, JsonNode> e : probes.entrySet()) {
      ObjectNode server = servers.addObject();
      server.put("name", e.getKey());
      server.put("kind", IndexedTool.SERVER);
      JsonNode probe = e.getValue();
      server.put("status", probe.path("status").asText("unknown"));
      for (String field : List.of("latencyMs", "checkedAt", "message")) {
        if (probe.hasNonNull(field)) {
          server.set(field, probe.get(field));
        }
      }
      server.put("tools", toolCounts.getOrDefault(e.getKey(), 0));
      ArrayNode agents = server.putArray("usedBy");
      usedBy.get(e.getKey()).forEach(agents::add);
    }
    return json(answer);
  }

  private static double millis(Duration d) {
    return Math.round(d.toNanos() / 100_000.0) / 10.0;
  }

  private static JsonNode parse(String text) {
    try {
      return JSON.readTree(text);
    } catch (IOException e) {
      return JSON.createObjectNode();
    }
  }

  private McpSchema.CallToolResult unknown(String name) {
    return error(
        "no tool named '"
            + bounded(name)
            + "' in the fleet ("
            + index.search().size()
            + " tools indexed): find_tools gives the names, {agent or server}/{tool}");
  }

  private static String bounded(String text) {
    return text.length() <= 200 ? text : text.substring(0, 200) + "…";
  }

  /**
   * The answer as structuredContent and, for clients that read only text, the same JSON as text.
   * The tree itself is the structured content: the SDK writes it as it is, with no copy into maps.
   */
  private McpSchema.CallToolResult json(ObjectNode answer) {
    String text;
    try {
      text = mapper.writeValueAsString(answer);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a tree of ours is not writable", e);
    }
    return new McpSchema.CallToolResult(
        List.of(new McpSchema.TextContent(text)), false, answer, null);
  }

  private static McpSchema.CallToolResult error(String message) {
    return McpSchema.CallToolResult.builder().addTextContent(message).isError(true).build();
  }

  /** A handler of the tool's arguments (and the call's progress token). */
  @FunctionalInterface
  private interface Handler {
    McpSchema.CallToolResult handle(
        McpAsyncServerExchange exchange, Map<String, Object> args, Object progressToken);
  }

  @FunctionalInterface
  private interface SimpleHandler {
    McpSchema.CallToolResult handle(McpAsyncServerExchange exchange, Map<String, Object> args);
  }

  /**
   * A tool that only tells (find_tools, get_schema, list_servers): answered on the request's own
   * thread, which waits for the answer anyway. A hop to another thread and back costs two wake-ups,
   * which on a busy machine are most of a fast call's tail (docs/benchmarks.md, "The registry's MCP
   * endpoint").
   */
  private static McpServerFeatures.AsyncToolSpecification telling(
      McpSchema.Tool tool, SimpleHandler handler) {
    return McpServerFeatures.AsyncToolSpecification.builder()
        .tool(tool)
        .callHandler((exchange, request) ->
            Mono.fromCallable(() -> handler.handle(exchange, arguments(request))))
        .build();
  }

  /**
   * call_tool: on a thread of its own, as an agent's turn (mcp.TurnHandler); the hop is nothing
   * beside a call to another server, which blocks for as long as its owner takes.
   */
  private static McpServerFeatures.AsyncToolSpecification calling(
      McpSchema.Tool tool, Handler handler) {
    return McpServerFeatures.AsyncToolSpecification.builder()
        .tool(tool)
        .callHandler((exchange, request) -> {
          Map<String, Object> args = arguments(request);
          Object token = request.progressToken();
          return Mono.fromCallable(() -> handler.handle(exchange, args, token)).subscribeOn(CALLS);
        })
        .build();
  }

  private static Map<String, Object> arguments(McpSchema.CallToolRequest request) {
    return request.arguments() == null ? Map.of() : request.arguments();
  }

  @Override
  public void close() {
    try {
      server.closeGracefully().block(Duration.ofSeconds(5));
    } finally {
      index.close();
      calls.close();
    }
  }
}
