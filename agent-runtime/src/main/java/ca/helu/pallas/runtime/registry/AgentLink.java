package ca.helu.pallas.runtime.registry;

import ca.helu.pallas.runtime.downstream.Credentials;
import ca.helu.pallas.runtime.downstream.ResourceWatch;
import ca.helu.pallas.runtime.health.HealthMonitor;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpClient;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The registry's link to one agent (docs/runtime.md, "The registry's MCP endpoint"): one MCP
 * session that follows the agent's health, tools and servers resources ({@link ResourceWatch}), and
 * what it read last. The agent's health as the registry shows it is the agent's own JSON while the
 * agent answers, else an {@code error} naming why the registry cannot reach it.
 */
final class AgentLink implements ResourceWatch.Listener, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(AgentLink.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  /** What the index hears from its links; each must return at once. */
  interface Changes {
    /** The agent's health as the registry shows it may have changed. */
    void health(String agent);

    /** The agent's tools, or its servers' tools, changed. */
    void tools(String agent);
  }

  private final String agent;
  private final String url;
  private final String healthUri;
  private final String toolsUri;
  private final String serversUri;
  private final Changes changes;
  private final ResourceWatch watch;
  private final CountDownLatch first = new CountDownLatch(1);
  private volatile String health;
  private volatile JsonNode tools;
  private volatile JsonNode servers;
  private volatile Duration latency;
  private volatile Instant checkedAt;
  private volatile String problem = "not reached yet";

  AgentLink(
      String agent,
      String url,
      Credentials credentials,
      Duration timeout,
      Duration interval,
      Supplier<HttpClient> http,
      Changes changes) {
    this.agent = agent;
    this.url = url;
    this.healthUri = "pallas://agents/" + agent + "/health";
    this.toolsUri = "pallas://agents/" + agent + "/tools";
    this.serversUri = "pallas://agents/" + agent + "/servers";
    this.changes = changes;
    this.watch =
        new ResourceWatch(
            "agent " + agent,
            url,
            credentials,
            List.of(healthUri, toolsUri, serversUri),
            timeout,
            interval,
            http,
            this);
  }

  AgentLink start() {
    watch.start();
    return this;
  }

  String agent() {
    return agent;
  }

  String url() {
    return url;
  }

  /**
   * Waits until the link has read the agent's tools, its servers' listed, or failed once, at most
   * {@code timeout}.
   */
  void awaitFirst(Duration timeout) throws InterruptedException {
    first.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
  }

  @Override
  public void read(String uri, String text) {
    if (uri.equals(healthUri)) {
      String before = health;
      health = text;
      if (!text.equals(before)) {
        changes.health(agent);
      }
    } else if (uri.equals(toolsUri)) {
      JsonNode now = parse(text);
      if (now != null && !now.equals(tools)) {
        tools = now;
        changes.tools(agent);
      }
      // a first question waits for the servers' first listings too (they follow at once)
      if (now != null && now.path("servers").findValues("pending").isEmpty()) {
        first.countDown();
      }
    } else if (uri.equals(serversUri)) {
      JsonNode now = parse(text);
      if (now != null) {
        servers = now;
      }
    }
  }

  private JsonNode parse(String text) {
    try {
      return JSON.readTree(text);
    } catch (JsonProcessingException e) {
      LOG.warn("agent {} sent a resource that is not JSON; kept what was read before", agent);
      return null;
    }
  }

  @Override
  public void reached(Duration took) {
    latency = took;
    checkedAt = Instant.now();
    if (problem != null) {
      problem = null;
      changes.health(agent);
    }
  }

  @Override
  public void lost(String why) {
    checkedAt = Instant.now();
    boolean changed = !why.equals(problem);
    problem = why;
    first.countDown();
    if (changed) {
      changes.health(agent);
    }
  }

  /** The agent's health JSON as the registry shows it (docs/contract.md, "The registry"). */
  String health() {
    String why = problem;
    String text = health;
    if (why != null || text == null) {
      return HealthMonitor.render(
              "error",
              "the registry cannot reach agent "
                  + agent
                  + ": "
                  + (why == null ? "no answer yet" : why))
          .json();
    }
    return text;
  }

  /** The tools resource the agent sent last, or null. */
  JsonNode tools() {
    return tools;
  }

  /** The servers resource the agent sent last, or null. */
  JsonNode servers() {
    return servers;
  }

  /** Why the registry cannot reach the agent now, or null when it answers. */
  String problem() {
    return problem;
  }

  /** How long the agent took to answer the registry's last ping, or null before it answered. */
  Duration latency() {
    return latency;
  }

  Instant checkedAt() {
    return checkedAt;
  }

  @Override
  public void close() {
    watch.close();
  }
}
