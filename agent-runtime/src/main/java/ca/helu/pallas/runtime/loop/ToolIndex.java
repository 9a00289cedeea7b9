package ca.helu.pallas.runtime.loop;

import dev.langchain4j.agent.tool.ToolSpecification;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tools of every server an agent may use, as the model sees them: {@code {server}__{tool}}. A
 * server that cannot list its tools is left out of this turn (and shows in health), the rest stay.
 */
final class ToolIndex {
  private static final Logger LOG = LoggerFactory.getLogger(ToolIndex.class);

  /** One exposed tool and where it lives. */
  record Entry(ToolServer server, String tool, ToolSpecification spec) {}

  private final Map<String, Entry> byExposedName;

  private ToolIndex(Map<String, Entry> byExposedName) {
    this.byExposedName = byExposedName;
  }

  static ToolIndex collect(
      List<ToolServer> servers, Function<ExposedTool, ToolSpecification> toSpecification) {
    Map<String, Entry> entries = new LinkedHashMap<>();
    for (ToolServer server : servers) {
      List<McpSchema.Tool> tools;
      try {
        tools = server.tools();
      } catch (RuntimeException e) {
        LOG.warn("tools of server {} are unavailable this turn: {}", server.name(), e.getMessage());
        continue;
      }
      for (McpSchema.Tool tool : tools) {
        String exposed = server.name() + "__" + tool.name();
        entries.put(
            exposed,
            new Entry(server, tool.name(), toSpecification.apply(new ExposedTool(exposed, tool))));
      }
    }
    return new ToolIndex(entries);
  }

  List<ToolSpecification> specifications() {
    List<ToolSpecification> specs = new ArrayList<>();
    byExposedName.values().forEach(e -> specs.add(e.spec()));
    return specs;
  }

  Entry find(String exposedName) {
    return byExposedName.get(exposedName);
  }
}
