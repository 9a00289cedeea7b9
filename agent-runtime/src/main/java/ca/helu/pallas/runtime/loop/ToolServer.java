package ca.helu.pallas.runtime.loop;

import io.modelcontextprotocol.spec.McpSchema;
import java.util.List;
import java.util.Map;

/** A server whose tools an agent may call: a downstream MCP server or another agent. */
public interface ToolServer {
  /** The name used in the agent's servers list and in tool names {server}__{tool}. */
  String name();

  /** The tools offered to the model; throws when the server cannot be reached. */
  List<McpSchema.Tool> tools();

  /** Calls a tool; never throws: failures come back as a failed {@link ToolResult}. */
  ToolResult call(String tool, Map<String, Object> arguments, CallContext context);
}
