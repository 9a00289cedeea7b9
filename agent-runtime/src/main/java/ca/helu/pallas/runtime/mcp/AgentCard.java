package ca.helu.pallas.runtime.mcp;

import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.Icon;
import ca.helu.pallas.api.ModelCapabilities;
import ca.helu.pallas.api.PallasDeploymentSpec;
import java.util.List;

/**
 * What an agent publishes about itself, read by both its registry entry (docs/contract.md,
 * "Registry") and its MCP server (name, version, instructions, tool titles and descriptions).
 */
public record AgentCard(
    String name,
    String title,
    String description,
    String version,
    List<Icon> icons,
    Capabilities capabilities) {

  /** What the agent's model can do; {@code model} is its name without the provider prefix. */
  public record Capabilities(String model, boolean vision, int contextWindow, int maxOutputTokens) {
    /** Characters of text per token of the context window (an estimate). */
    private static final int CHARS_PER_TOKEN = 4;

    /** About how many characters the model reads at once: its history or one message. */
    public long contextChars() {
      return (long) contextWindow * CHARS_PER_TOKEN;
    }
  }

  public AgentCard {
    icons = List.copyOf(icons);
  }

  public static AgentCard of(PallasDeploymentSpec spec, AgentSpec agent) {
    ModelCapabilities caps = spec.effectiveModelCapabilities();
    return new AgentCard(
        agent.name(),
        agent.effectiveTitle(),
        agent.effectiveDescription(),
        spec.effectiveVersion(),
        agent.effectiveIcons(),
        new Capabilities(
            modelName(spec.modelOf(agent)),
            caps.effectiveVision(),
            caps.effectiveContextWindow(),
            caps.effectiveMaxOutputTokens()));
  }

  /** The model name without its provider prefix, as the original publishes it. */
  static String modelName(String model) {
    if (model == null) {
      return "";
    }
    int dot = model.indexOf('.');
    return dot < 0 ? model : model.substring(dot + 1);
  }
}
