package ca.helu.pallas.runtime.serve;

import ca.helu.pallas.runtime.downstream.McpToolServer;
import ca.helu.pallas.runtime.health.CheckResult;
import ca.helu.pallas.runtime.health.HealthMonitor;
import ca.helu.pallas.runtime.mcp.ServerCatalog;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An agent's downstream MCP servers as its tools and servers resources show them ({@link
 * ServerCatalog}): the probes are the agent's health probes; the tools are listed on the session
 * the agent's own calls use, once someone first reads them (the registry, docs/runtime.md, "The
 * registry's MCP endpoint"), then again whenever a server says its tools changed or a new session
 * begins, and after a probe that finds a server up whose tools are not known. An agent nobody asks
 * opens no session for this.
 */
final class DownstreamCatalog implements ServerCatalog {
  private static final Logger LOG = LoggerFactory.getLogger(DownstreamCatalog.class);

  private final List<McpToolServer> servers;
  private final HealthMonitor monitor;
  private final Map<String, String> errors = new ConcurrentHashMap<>();
  // per server: 0 not listing, 1 listing, 2 listing and asked to list again when done
  private final Map<String, AtomicInteger> listing = new ConcurrentHashMap<>();
  private final List<Runnable> watchers = new CopyOnWriteArrayList<>();
  private volatile boolean started;

  /**
   * @param servers the agent's downstream MCP servers (not its peer agents: the registry knows them
   *     as agents)
   */
  DownstreamCatalog(List<McpToolServer> servers, HealthMonitor monitor) {
    this.servers = List.copyOf(servers);
    this.monitor = monitor;
    for (McpToolServer server : this.servers) {
      listing.put(server.name(), new AtomicInteger());
      server.onToolsChanged(() -> {
        if (started) {
          list(server);
        }
      });
    }
    monitor.watch(flipped -> {
      if (!started) {
        return;
      }
      for (McpToolServer server : this.servers) {
        if (server.listed() == null
            && monitor.latest(server.name()).map(CheckResult::ok).orElse(false)) {
          list(server);
        }
      }
    });
  }

  @Override
  public List<Listing> tools() {
    if (!started) {
      started = true;
      servers.forEach(this::list);
    }
    return servers.stream()
        .map(s -> {
          var tools = s.listed();
          String error = errors.get(s.name());
          boolean pending = tools == null && error == null;
          return new Listing(
              s.name(),
              tools == null ? List.of() : tools,
              pending ? "not listed yet" : error,
              pending);
        })
        .toList();
  }

  @Override
  public List<Probe> probes() {
    return servers.stream()
        .map(s ->
            monitor
                .latest(s.name())
                .map(r -> new Probe(s.name(), r.ok(), r.checkedAt(), r.latency(), r.message()))
                .orElse(new Probe(s.name(), null, null, null, null)))
        .toList();
  }

  @Override
  public void onToolsChanged(Runnable changed) {
    watchers.add(changed);
  }

  /** Lists {@code server}'s tools on a thread of its own, once at a time per server. */
  private void list(McpToolServer server) {
    AtomicInteger state = listing.get(server.name());
    if (state.getAndUpdate(v -> Math.min(v + 1, 2)) > 0) {
      return; // the listing running now lists again when it is done
    }
    Thread.ofVirtual()
        .name("pallas-catalog-" + server.name())
        .start(() -> {
          do {
            try {
              server.tools();
              errors.remove(server.name());
            } catch (RuntimeException e) {
              errors.put(server.name(), e.getMessage());
            }
            for (Runnable watcher : watchers) {
              try {
                watcher.run();
              } catch (RuntimeException e) {
                LOG.warn("telling a watcher of {}'s tools failed: {}", server.name(), e.toString());
              }
            }
          } while (state.decrementAndGet() > 0);
        });
  }
}
