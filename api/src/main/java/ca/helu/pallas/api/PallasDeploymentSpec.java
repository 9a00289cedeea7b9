package ca.helu.pallas.api;

import ca.helu.pallas.api.validation.Formats;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import java.util.List;
import java.util.Optional;

/**
 * The desired state of a PallasDeployment: agents, downstream MCP servers, models, registry. Its
 * rules across entries are declared in {@link ca.helu.pallas.api.validation.Rules}
 * (docs/crd-reference.md).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record PallasDeploymentSpec(
    @JsonPropertyDescription("Version published in registry entries. Default \"1.0.0\".")
        @Pattern(Formats.NOT_BLANK)
        @Size(max = 64)
        String version,
    @JsonPropertyDescription(
            "Host used in registry remotes[].url. Default: the agent Service's cluster DNS name"
                + " (Kubernetes) or localhost (serve mode).")
        @Pattern(Formats.HOST)
        @Size(max = 253)
        String host,
    @JsonPropertyDescription("The registry: its port and the namespace of registry names.")
        RegistrySpec registry,
    @JsonPropertyDescription(
            "Model for agents that name none: provider.model (openai.*, anthropic.*) or a built-in"
                + " test model (passthrough, playback, slow).")
        @Pattern(Models.PATTERN)
        @Size(max = 256)
        String defaultModel,
    @JsonPropertyDescription("Capabilities of the models, published in the registry.")
        ModelCapabilities modelCapabilities,
    @JsonPropertyDescription("LLM provider endpoints and credentials.") ProvidersSpec providers,
    @JsonPropertyDescription("Downstream MCP servers that agents may use.") @Size(max = MAX_SERVERS)
        List<McpServerSpec> mcpServers,
    @JsonPropertyDescription("The agents; each is served as an MCP server on its own port.")
        @Size(min = 1, max = MAX_AGENTS)
        List<AgentSpec> agents,
    @JsonPropertyDescription("Prometheus scraping.") MonitoringSpec monitoring,
    @JsonPropertyDescription(
            "The conversation store (Kubernetes): agents keep their histories in the database its"
                + " Secret names. Default: the operator's default store when it has one and this"
                + " namespace holds its Secret (the chart's store.fleetDefault), else each pod's"
                + " memory.")
        StoreSpec store,
    @JsonPropertyDescription(
            "Inbound authentication: every agent asks its callers for a bearer token, of an OIDC"
                + " issuer or from a Secret of static tokens. Default: none, anyone who reaches an"
                + " agent's port may call it.")
        AuthSpec auth,
    @JsonPropertyDescription(
            "Who may reach the fleet's pods (Kubernetes): a NetworkPolicy the operator renders."
                + " Default: the fleet's namespace, the operator and Prometheus.")
        NetworkPolicySpec networkPolicy,
    @JsonPropertyDescription(
            "How much one caller may use each agent (agents[].callerLimits overrides it). Default:"
                + " no limit.")
        CallerLimitsSpec callerLimits,
    @JsonPropertyDescription(
            "Where every agent sends its OpenTelemetry traces. Default: none (tracing off).")
        TracingSpec tracing,
    @JsonPropertyDescription(
            "Where the fleet's pods run and what they carry beyond the operator's own (Kubernetes):"
                + " nodeSelector, tolerations, affinity, topologySpreadConstraints,"
                + " priorityClassName, labels, annotations, env, envFrom, volumes, volumeMounts,"
                + " serviceAccountName. Every agent's pods and the registry's take it;"
                + " agents[].pod replaces it field by field.")
        PodSettingsSpec pod) {

  public static final String DEFAULT_VERSION = "1.0.0";

  /** Bounds that keep the CRD's CEL rules within the API server's cost budget. */
  public static final int MAX_AGENTS = 64;

  public static final int MAX_SERVERS = 64;

  /** The agent's own limits per caller, else the fleet's, else null (none). */
  public CallerLimitsSpec callerLimitsOf(AgentSpec agent) {
    return agent.callerLimits() != null ? agent.callerLimits() : callerLimits;
  }

  /**
   * An agent's pod settings: each field its own {@code pod} sets, else the fleet's {@code pod}
   * (docs/operator.md, "Pods where you want them").
   */
  public PodSettingsSpec podOf(AgentSpec agent) {
    return PodSettingsSpec.merge(pod, agent.pod());
  }

  /** The fleet-wide pod settings, which the registry's pods take. */
  public PodSettingsSpec effectivePod() {
    return pod == null ? PodSettingsSpec.EMPTY : pod;
  }

  public NetworkPolicySpec effectiveNetworkPolicy() {
    return networkPolicy == null ? new NetworkPolicySpec(null, null, null) : networkPolicy;
  }

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
