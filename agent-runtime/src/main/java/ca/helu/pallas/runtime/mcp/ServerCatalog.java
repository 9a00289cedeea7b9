package ca.helu.pallas.runtime.mcp;

import io.modelcontextprotocol.spec.McpSchema;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * The downstream MCP servers an agent calls, as its tools and servers resources show them
 * (docs/contract.md, "Resources"): each server's tools as it listed them, and its last probe. The
 * registry indexes a fleet from these (docs/runtime.md, "The registry's MCP endpoint") rather than
 * opening sessions to every server itself.
 */
public interface ServerCatalog {
  ServerCatalog NONE =
      new ServerCatalog() {
        @Override
        public List<Listing> tools() {
          return List.of();
        }

        @Override
        public List<Probe> probes() {
          return List.of();
        }

        @Override
        public void onToolsChanged(Runnable changed) {}
      };

  /**
   * A server's tools.
   *
   * @param tools as the server listed them last; empty while unknown
   * @param error why they are not known (not listed yet, or the listing failed), or null
   * @param pending a first listing is under way
   */
  record Listing(String server, List<McpSchema.Tool> tools, String error, boolean pending) {}

  /**
   * A server's last probe.
   *
   * @param up whether it answered; null before its first probe
   * @param latency how long the probe took, or null before the first
   * @param message why it failed, or null
   */
  record Probe(String server, Boolean up, Instant checkedAt, Duration latency, String message) {}

  /** Each server's tools, in the agent's servers order. */
  List<Listing> tools();

  /** Each server's last probe, in the agent's servers order. */
  List<Probe> probes();

  /** Tells {@code changed} when a server's listed tools changed; it must return at once. */
  void onToolsChanged(Runnable changed);
}
