package ca.helu.pallas.runtime.registry;

import ca.helu.pallas.runtime.downstream.Credentials;
import com.fasterxml.jackson.databind.JsonNode;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * What the registry knows of the fleet's tools and health (docs/runtime.md, "The registry's MCP
 * endpoint"): one {@link AgentLink} per agent, and the {@link ToolSearch} over every agent's tools
 * and every downstream server's, rebuilt when one of them changes. A server several agents call is
 * indexed once, from the first agent (in the manifest's order) that listed its tools.
 *
 * <p>Links are opened once the index is {@link #activate activated}, on the first session of the
 * registry's MCP endpoint: a registry nobody asks holds no session with any agent.
 */
final class FleetIndex implements AutoCloseable {
  /** An agent to follow: its name and the MCP URL the registry reaches it at. */
  record Target(String agent, String url) {}

  private final Duration timeout;
  private final Duration interval;
  private final Function<String, Credentials> credentials;
  private final HttpClient http;
  private final Consumer<String> healthChanged;
  private final Runnable agentsChanged;
  private final Object lock = new Object();
  private List<Target> targets = List.of(); // guarded by lock
  private final Map<String, AgentLink> links = new LinkedHashMap<>(); // guarded by lock
  private boolean active; // guarded by lock
  private boolean closed; // guarded by lock
  private volatile ToolSearch search = new ToolSearch(List.of());
  private volatile List<AgentLink> ordered = List.of();

  /**
   * @param timeout of each request to an agent
   * @param interval between the pings that time each agent
   * @param credentials what the registry's requests to an agent carry, by agent name
   * @param healthChanged told the agent whose health, as the registry shows it, may have changed
   * @param agentsChanged told when agents were added or removed
   */
  FleetIndex(
      Duration timeout,
      Duration interval,
      Function<String, Credentials> credentials,
      Consumer<String> healthChanged,
      Runnable agentsChanged) {
    this.timeout = timeout;
    this.interval = interval;
    this.credentials = credentials;
    this.healthChanged = healthChanged;
    this.agentsChanged = agentsChanged;
    this.http =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(timeout)
            .build();
  }

  /** Follows these agents from now on: links to agents gone are closed, new ones opened. */
  void follow(List<Target> next) {
    boolean changed;
    synchronized (lock) {
      changed = !next.equals(targets);
      targets = List.copyOf(next);
      if (active && changed) {
        relink();
      }
    }
    if (changed) {
      agentsChanged.run();
    }
  }

  /** Opens the links, if they are not open yet; returns at once. */
  void activate() {
    synchronized (lock) {
      if (active || closed) {
        return;
      }
      active = true;
      relink();
    }
  }

  /** Waits for every link's first outcome (tools read, or a failure), at most {@code timeout}. */
  void awaitFirst(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    for (AgentLink link : ordered) {
      link.awaitFirst(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
    }
  }

  private void relink() {
    Map<String, AgentLink> next = new LinkedHashMap<>();
    for (Target target : targets) {
      AgentLink link = links.get(target.agent());
      if (link == null || !link.url().equals(target.url())) {
        link =
            new AgentLink(
                    target.agent(),
                    target.url(),
                    credentials.apply(target.agent()),
                    timeout,
                    interval,
                    () -> http,
                    new AgentLink.Changes() {
                      @Override
                      public void health(String agent) {
                        healthChanged.accept(agent);
                      }

                      @Override
                      public void tools(String agent) {
                        rebuild();
                      }
                    })
                .start();
      }
      next.put(target.agent(), link);
    }
    for (AgentLink old : links.values()) {
      if (next.get(old.agent()) != old) {
        old.close();
      }
    }
    links.clear();
    links.putAll(next);
    ordered = List.copyOf(next.values());
    rebuild();
  }

  /** Builds the search anew from what the links read last; one at a time, the last one wins. */
  private synchronized void rebuild() {
    List<IndexedTool> tools = new ArrayList<>();
    Set<String> servers = new HashSet<>();
    List<AgentLink> now = ordered;
    for (AgentLink link : now) {
      JsonNode resource = link.tools();
      if (resource == null) {
        continue;
      }
      for (JsonNode tool : resource.path("tools")) {
        tools.add(IndexedTool.of(link.agent(), IndexedTool.AGENT, tool));
      }
    }
    for (AgentLink link : now) {
      JsonNode resource = link.tools();
      if (resource == null) {
        continue;
      }
      for (JsonNode server : resource.path("servers")) {
        String name = server.path("name").asText();
        if (server.path("tools").isEmpty() || !servers.add(name)) {
          continue;
        }
        for (JsonNode tool : server.path("tools")) {
          tools.add(IndexedTool.of(name, IndexedTool.SERVER, tool));
        }
      }
    }
    search = new ToolSearch(tools);
  }

  /** The search over the tools known now. */
  ToolSearch search() {
    return search;
  }

  /** The tool of this fully qualified name, if the index holds it. */
  Optional<IndexedTool> tool(String name) {
    return Optional.ofNullable(search.tool(name));
  }

  /** The links, in the manifest's order of agents. */
  List<AgentLink> links() {
    return ordered;
  }

  /** The link to {@code agent}, if it is followed. */
  Optional<AgentLink> link(String agent) {
    return ordered.stream().filter(l -> l.agent().equals(agent)).findFirst();
  }

  /** The agents followed, whether linked yet or not. */
  List<Target> targets() {
    synchronized (lock) {
      return targets;
    }
  }

  @Override
  public void close() {
    synchronized (lock) {
      closed = true;
      links.values().forEach(AgentLink::close);
      links.clear();
      ordered = List.of();
    }
    http.shutdown();
  }
}
