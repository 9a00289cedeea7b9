package ca.helu.pallas.runtime.mcp;

import ca.helu.pallas.runtime.health.AgentHealth;
import ca.helu.pallas.runtime.health.HealthReport;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpAsyncServer;
import io.modelcontextprotocol.server.McpAsyncServerExchange;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.io.UncheckedIOException;
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
 * may subscribe to instead of polling get_health, and the caller's own conversation, as the
 * {agent}_history prompt shows it. A subscriber is told of a change when a check's result comes in
 * ({@link ca.helu.pallas.runtime.health.HealthWatcher}), not by a poll of its own.
 */
final class AgentResources {
  private static final Logger LOG = LoggerFactory.getLogger(AgentResources.class);
  private static final String JSON = "application/json";

  private final AgentHealth health;
  private final Supplier<HealthReport> healthNow;
  private final Function<McpAsyncServerExchange, List<McpSchema.PromptMessage>> history;
  private final McpJsonMapper json;
  private final String healthUri;
  private final String historyUri;
  private final List<McpServerFeatures.AsyncResourceSpecification> specifications =
      new ArrayList<>();
  private volatile McpAsyncServer server;
  private String notified; // the status subscribers last heard of; guarded by this

  /**
   * @param healthNow get_health's answer, which the health resource returns as it is
   * @param history the caller's conversation as the history prompt shows it, or null when the agent
   *     keeps none (instance scope request: no history resource)
   */
  AgentResources(
      AgentCard card,
      AgentHealth health,
      Supplier<HealthReport> healthNow,
      Function<McpAsyncServerExchange, List<McpSchema.PromptMessage>> history,
      McpJsonMapper json) {
    this.health = health;
    this.healthNow = healthNow;
    this.history = history;
    this.json = json;
    this.healthUri = healthUri(card.name());
    this.historyUri = "pallas://agents/" + card.name() + "/history";
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
  }

  static String healthUri(String agent) {
    return "pallas://agents/" + agent + "/health";
  }

  List<McpServerFeatures.AsyncResourceSpecification> specifications() {
    return specifications;
  }

  /** Starts telling {@code server}'s subscribers of health changes. */
  void start(McpAsyncServer server) {
    synchronized (this) {
      this.server = server;
      notified = health.current().status();
    }
    health.watch(this::checked);
  }

  /**
   * A check had a result: subscribers hear of it when a check flipped or the agent's status changed
   * (a result that confirms what was known is not a change).
   */
  private void checked(boolean flipped) {
    McpAsyncServer target = server;
    if (target == null) {
      return;
    }
    String status = health.current().status();
    synchronized (this) {
      if (!flipped && status.equals(notified)) {
        return;
      }
      notified = status;
    }
    // sent on each subscribed session's listening stream (GET /mcp); a session without one misses
    // it, as MCP allows (StreamableHttpTransport#notifyClient)
    target
        .notifyResourcesUpdated(new McpSchema.ResourcesUpdatedNotification(healthUri, null))
        .subscribe(
            done -> {},
            e -> LOG.debug("telling subscribers of {} failed: {}", healthUri, e.toString()));
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
