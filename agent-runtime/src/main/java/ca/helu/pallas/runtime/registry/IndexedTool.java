package ca.helu.pallas.runtime.registry;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One tool the registry finds (docs/runtime.md, "The registry's MCP endpoint"): an agent's own, or
 * a downstream MCP server's as an agent listed it.
 *
 * @param name its fully qualified name, {@code {owner}/{tool}}: stable while the owner keeps the
 *     tool, and unambiguous, since an agent's or server's name never holds a {@code /}
 * @param owner the agent or server that has it
 * @param kind {@code agent} or {@code server}
 * @param tool the tool as tools/list gives it (name, title, description, inputSchema, ...)
 */
record IndexedTool(String name, String owner, String kind, JsonNode tool) {
  static final String AGENT = "agent";
  static final String SERVER = "server";

  static IndexedTool of(String owner, String kind, JsonNode tool) {
    return new IndexedTool(owner + "/" + tool.path("name").asText(), owner, kind, tool);
  }

  String toolName() {
    return tool.path("name").asText();
  }

  String description() {
    return tool.path("description").asText("");
  }
}
