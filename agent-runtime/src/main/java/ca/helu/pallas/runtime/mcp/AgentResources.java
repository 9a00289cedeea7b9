package ca.helu.pallas.runtime.mcp;

import ca.helu.pallas.runtime.health.AgentHealth;
import ca.helu.pallas.runtime.health.HealthReport;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpAsyncServer;
import io.modelcontextprotocol.server.McpAsyncServerExchange;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * An agent's MCP resources (docs/contract.md, "Resources"; issue 20 §2): its health, which a client
 * may subscribe to instead of polling get_health, the caller's own conversation, as the
 * {agent}_history prompt shows it, and what the registry indexes: the tools of the agent and of its
 * downstream servers, and those servers' last probes ({@link ServerCatalog}). A subscriber is told
 * of a change when a check's result comes in ({@link ca.helu.pallas.runtime.health.HealthWatcher})
 * or a server's tools change, not by a poll of its own.
 */
final class AgentResources {
  private static final Logger LOG = LoggerFactory.getLogger(AgentResources.class);
  private static final String JSON = "application/json";
  private static final ObjectMapper TREE = new ObjectMapper();

  private final AgentHealth health;
  private final Supplier<HealthReport> healthNow;
  private final Function<McpAsyncServerExchange, List<McpSchema.PromptMessage>> history;
  private final McpJsonMapper json;
  private final String agent;
  private final String healthUri;
  private final String historyUri;
  private final String toolsUri;
  private final String serversUri;
  private final List<McpSchema.Tool> ownTools;
  private final ServerCatalog catalog;
  private final List<McpServerFeatures.AsyncResourceSpecification> specifications =
      new ArrayList<>();
  private volatile McpAsyncServer server;
  private String notified; // the status subscribers last heard of; guarded by this
  private String toolsNotified; // the tools JSON subscribers last heard of; guarded by this
  private String serversNotified; // the servers JSON subscribers last heard of; guarded by this

  /**
   * @param healthNow get_health's answer, which the health resource returns as it is
   * @param history the caller's conversation as the history prompt shows it, or null when the agent
   *     keeps none (instance scope request: no history resource)
   * @param ownTools the agent's own tools, as tools/list answers
   * @param catalog the downstream servers' tools and probes
   */
  AgentResources(
      AgentCard card,
      AgentHealth health,
      Supplier<HealthReport> healthNow,
      Function<McpAsyncServerExchange, List<McpSchema.PromptMessage>> history,
      McpJsonMapper json,
      List<McpSchema.Tool> ownTools,
      ServerCatalog catalog) {
    this.agent = card.name();
    this.health = health;
    this.healthNow = healthNow;
    this.history = history;
    this.json = json;
    this.ownTools = List.copyOf(ownTools);
    this.catalog = catalog;
    this.healthUri = healthUri(card.name());
    this.historyUri = "pallas://agents/" + card.name() + "/history";
    this.toolsUri = toolsUri(card.name());
    this.serversUri = serversUri(card.name());
    specifications.add(
        new McpServerFeatures.AsyncResourceSpecification(
            McpSchema.Resource.builder(healthUri, "health")
                .title("Health of " + card.title())
                .description(
                    "get_health's JSON; subscribe to be told when the status or a check changes")
                .mimeType(JSON)
                .build(),
            (exchange, request) ->
                Mono.fromSupplier(() -> text(healthUri, healthNow.get().json()))));
    if (history != null) {
      specifications.add(
          new McpServerFeatures.AsyncResourceSpecification(
              McpSchema.Resource.builder(historyUri, "history")
                  .title("Your conversation with " + card.title())
                  .description(
                      "The caller's own conversation, as the "
                          + card.name()
                          + "_history prompt shows it")
                  .mimeType(JSON)
                  .build(),
              (exchange, request) -> Mono.fromSupplier(() -> readHistory(exchange))));
    }
    specifications.add(
        new McpServerFeatures.AsyncResourceSpecification(
            McpSchema.Resource.builder(toolsUri, "tools")
                .title("Tools of " + card.title() + " and of its servers")
                .description(
                    "The agent's own tools and each downstream MCP server's, as tools/list"
                        + " answers them; subscribe to be told when a server's tools change")
                .mimeType(JSON)
                .build(),
            (exchange, request) -> Mono.fromSupplier(() -> text(toolsUri, toolsJson()))));
    specifications.add(
        new McpServerFeatures.AsyncResourceSpecification(
            McpSchema.Resource.builder(serversUri, "servers")
                .title("Downstream servers of " + card.title())
                .description(
                    "Each downstream MCP server's last probe: up or down, its latency, when;"
                        + " subscribe to be told of each new probe")
                .mimeType(JSON)
                .build(),
            (exchange, request) -> Mono.fromSupplier(() -> text(serversUri, serversJson()))));
  }

  static String healthUri(String agent) {
    return "pallas://agents/" + agent + "/health";
  }

  List<McpServerFeatures.AsyncResourceSpecification> specifications() {
    return specifications;
  }

  static String toolsUri(String agent) {
    return "pallas://agents/" + agent + "/tools";
  }

  static String serversUri(String agent) {
    return "pallas://agents/" + agent + "/servers";
  }

  /** Starts telling {@code server}'s subscribers of health, tools and probe changes. */
  void start(McpAsyncServer server) {
    synchronized (this) {
      this.server = server;
      notified = health.current().status();
      // the tools are not read here: reading them starts their listing (ServerCatalog)
      serversNotified = serversJson();
    }
    health.watch(this::checked);
    health.watch(flipped -> probed());
    catalog.onToolsChanged(this::toolsChanged);
  }

  /** A server's tools may have changed: subscribers hear of it when the list did. */
  private void toolsChanged() {
    String now = toolsJson();
    synchronized (this) {
      if (server == null || now.equals(toolsNotified)) {
        return;
      }
      toolsNotified = now;
    }
    notify(toolsUri);
  }

  /** A probe had a result (or the periodic tick came): subscribers hear of a new probe. */
  private void probed() {
    String now = serversJson();
    synchronized (this) {
      if (server == null || now.equals(serversNotified)) {
        return;
      }
      serversNotified = now;
    }
    notify(serversUri);
  }

  private void notify(String uri) {
    // sent on each subscribed session's listening stream (GET /mcp); a session without one misses
    // it, as MCP allows (StreamableHttpTransport#notifyClient)
    server
        .notifyResourcesUpdated(new McpSchema.ResourcesUpdatedNotification(uri, null))
        .subscribe(
            done -> {}, e -> LOG.debug("telling subscribers of {} failed: {}", uri, e.toString()));
  }

  /**
   * The tools resource: {@code {"agent", "tools": [the agent's own], "servers": [{"name", "tools",
   * "error"?, "pending"?}]}}, each tool as tools/list has it; {@code pending} while a server's
   * first listing is under way.
   */
  private String toolsJson() {
    ObjectNode root = TREE.createObjectNode();
    root.put("agent", agent);
    ArrayNode own = root.putArray("tools");
    ownTools.forEach(t -> own.add(tree(t)));
    ArrayNode servers = root.putArray("servers");
    for (ServerCatalog.Listing listing : catalog.tools()) {
      ObjectNode server = servers.addObject();
      server.put("name", listing.server());
      ArrayNode tools = server.putArray("tools");
      listing.tools().forEach(t -> tools.add(tree(t)));
      if (listing.error() != null) {
        server.put("error", listing.error());
      }
      if (listing.pending()) {
        server.put("pending", true);
      }
    }
    return root.toString();
  }

  /**
   * The servers resource: {@code {"servers": [{"name", "status": "up"|"down"|"unknown",
   * "latencyMs"?, "checkedAt"?, "message"?}]}}.
   */
  private String serversJson() {
    ObjectNode root = TREE.createObjectNode();
    ArrayNode servers = root.putArray("servers");
    for (ServerCatalog.Probe probe : catalog.probes()) {
      ObjectNode server = servers.addObject();
      server.put("name", probe.server());
      server.put("status", probe.up() == null ? "unknown" : probe.up() ? "up" : "down");
      if (probe.latency() != null) {
        // to a tenth of a millisecond
        server.put("latencyMs", Math.round(probe.latency().toNanos() / 100_000.0) / 10.0);
      }
      if (probe.checkedAt() != null) {
        server.put("checkedAt", probe.checkedAt().truncatedTo(ChronoUnit.MILLIS).toString());
      }
      if (probe.message() != null && !Boolean.TRUE.equals(probe.up())) {
        server.put("message", probe.message());
      }
    }
    return root.toString();
  }

  /** A tool as the SDK writes it in tools/list. */
  private JsonNode tree(McpSchema.Tool tool) {
    try {
      return TREE.readTree(json.writeValueAsString(tool));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * A check had a result: subscribers hear of it when a check flipped or the agent's status changed
   * (a result that confirms what was known is not a change).
   */
  private void checked(boolean flipped) {
    if (server == null) {
      return;
    }
    String status = health.current().status();
    synchronized (this) {
      if (!flipped && status.equals(notified)) {
        return;
      }
      notified = status;
    }
    notify(healthUri);
  }

  private McpSchema.ReadResourceResult readHistory(McpAsyncServerExchange exchange) {
    try {
      return text(historyUri, json.writeValueAsString(Map.of("messages", history.apply(exchange))));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static McpSchema.ReadResourceResult text(String uri, String body) {
    return new McpSchema.ReadResourceResult(
        List.of(new McpSchema.TextResourceContents(uri, JSON, body, null)), null);
  }
}
