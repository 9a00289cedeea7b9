package ca.helu.pallas.runtime.serve;

import ca.helu.pallas.runtime.health.AgentHealth;
import ca.helu.pallas.runtime.loop.ModelClient;
import ca.helu.pallas.runtime.loop.ToolServer;
import ca.helu.pallas.runtime.mcp.ServerCatalog;
import ca.helu.pallas.runtime.tracing.Tracing;
import java.util.List;

/**
 * What one agent needs from outside the process: its model, the servers whose tools it calls, and
 * its health. Closing releases their connections and background probes.
 */
public interface AgentParts extends AutoCloseable {
  ModelClient model();

  List<ToolServer> toolServers();

  AgentHealth health();

  /** Its downstream servers' tools and probes, for its tools and servers resources. */
  default ServerCatalog catalog() {
    return ServerCatalog.NONE;
  }

  /** Where its spans go (docs/observability.md); off unless the environment configures it. */
  default Tracing tracing() {
    return Tracing.OFF;
  }

  @Override
  void close();
}
