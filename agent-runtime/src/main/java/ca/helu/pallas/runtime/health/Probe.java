package ca.helu.pallas.runtime.health;

import java.util.Map;

/**
 * Checks that a downstream MCP server answers (docs/runtime.md, "Health"). The runtime's probe is
 * its MCP client's own (downstream.McpProbe), so a probe and a tool call speak MCP one way.
 */
@FunctionalInterface
public interface Probe {
  /** Never throws: a server that does not answer is a failed result naming why. */
  CheckResult probe(String url, Map<String, String> headers);
}
