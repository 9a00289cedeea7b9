package ca.helu.pallas.runtime.serve;

import ca.helu.pallas.runtime.loop.ExposedTool;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.model.chat.request.json.JsonObjectSchema;
import dev.langchain4j.model.chat.request.json.JsonRawSchema;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.util.List;
import java.util.Map;

/** An MCP tool as the model sees it: its JSON Schema kept property by property. */
final class ToolSpecifications {
  private ToolSpecifications() {}

  static ToolSpecification of(ExposedTool exposed) {
    McpSchema.Tool tool = exposed.tool();
    JsonObjectSchema.Builder params = JsonObjectSchema.builder();
    Map<String, Object> schema = tool.inputSchema();
    if (schema != null && schema.get("properties") instanceof Map<?, ?> properties) {
      for (Map.Entry<?, ?> p : properties.entrySet()) {
        try {
          params.addProperty(
              p.getKey().toString(),
              JsonRawSchema.from(McpJsonDefaults.getMapper().writeValueAsString(p.getValue())));
        } catch (IOException e) {
          throw new IllegalArgumentException("tool " + tool.name() + ": bad schema", e);
        }
      }
      if (schema.get("required") instanceof List<?> required) {
        params.required(required.stream().map(Object::toString).toList());
      }
    }
    return ToolSpecification.builder()
        .name(exposed.exposedName())
        .description(tool.description() == null ? tool.name() : tool.description())
        .parameters(params.build())
        .build();
  }
}
