package ca.helu.pallas.runtime.loop;

import io.modelcontextprotocol.spec.McpSchema;

/** An MCP tool under the name the model sees: {@code {server}__{tool}}. */
public record ExposedTool(String exposedName, McpSchema.Tool tool) {}
