package ca.helu.pallas.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.List;
import java.util.Optional;

/** The desired state of a PallasDeployment: agents, downstream MCP servers, models, registry. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record PallasDeploymentSpec(
    @JsonPropertyDescription("Version published in registry entries. Default \"1.0.0\".")
        String version,
    @JsonPropertyDescription(
            "Host used in registry remotes[].url. Default: the agent Service's cluster DNS name"
                + " (Kubernetes) or localhost (serve mode).")
        String host,
    @JsonPropertyDescription("The registry: its port and the namespace of registry names.")
        RegistrySpec registry,
    @JsonPropertyDescription(
            "Model for agents that name none: provider.model (openai.*, anthropic.*) or a built-in"
                + " test model (passthrough, playback, slow).")
        String defaultModel,
    @JsonPropertyDescription("Capabilities of the models, published in the registry.")
        ModelCapabilities modelCapabilities,
    @JsonPropertyDescription("LLM provider endpoints and credentials.") ProvidersSpec providers,
    @JsonPropertyDescription("Downstream MCP servers that agents may use.")
        List<McpServerSpec> mcpServers,
    @JsonPropertyDescription("The agents; each is served as an MCP server on its own port.")
        List<AgentSpec> agents,
    @JsonPropertyDescription("Prometheus scraping.") MonitoringSpec monitoring) {

  public static final String DEFAULT_VERSION = "1.0.0";

  public String effectiveVersion() {
    return version == null ? DEFAULT_VERSION : version;
  }

  public RegistrySpec effectiveRegistry() {
    return registry == null ? new RegistrySpec(null, null) : registry;
  }

  public ModelCapabilities effectiveModelCapabilities() {
    return modelCapabilities == null ? new ModelCapabilities(null, null, null) : modelCapabilities;
  }

  public ProvidersSpec effectiveProviders() {
    return providers == null ? new ProvidersSpec(null, null) : providers;
  }

  public List<McpServerSpec> effectiveMcpServers() {
    return mcpServers == null ? List.of() : mcpServers;
  }

  public List<AgentSpec> effectiveAgents() {
    return agents == null ? List.of() : agents;
  }

  public Optional<AgentSpec> agent(String name) {
    return effectiveAgents().stream().filter(a -> a.name().equals(name)).findFirst();
  }

  public Optional<McpServerSpec> mcpServer(String name) {
    return effectiveMcpServers().stream().filter(s -> s.name().equals(name)).findFirst();
  }

  /** The port an agent listens on: its own, or registry port + 1 + its index. */
  public int portOf(AgentSpec agent) {
    if (agent.port() != null) {
      return agent.port();
    }
    return effectiveRegistry().effectivePort() + 1 + effectiveAgents().indexOf(agent);
  }

  /** The model an agent uses: its own, or the deployment's default. */
  public String modelOf(AgentSpec agent) {
    return agent.model() != null ? agent.model() : defaultModel;
  }
}
