package ca.helu.pallas.api;

import ca.helu.pallas.api.validation.Formats;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import java.util.List;

/** One agent: an LLM with an instruction and tools, served as an MCP server on its own port. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record AgentSpec(
    @JsonPropertyDescription(
            "Lower-case letters, digits, '-' and '_'; starts and ends with a letter or digit.")
        @Required
        @Pattern(PallasNames.NAME_PATTERN)
        @Size(max = 63)
        String name,
    @JsonPropertyDescription("Display name in the registry. Default: the name, capitalised.")
        @Pattern(Formats.NOT_BLANK)
        @Size(max = 200)
        String title,
    @JsonPropertyDescription("One line (1-100 characters) shown in the registry.")
        @Pattern(Formats.NOT_BLANK)
        @Size(min = 1, max = MAX_DESCRIPTION)
        String description,
    @JsonPropertyDescription("Service/listen port. Default registry.port + 1 + index.")
        @Min(1)
        @Max(65535)
        Integer port,
    @JsonPropertyDescription("System instruction for the model.") String instruction,
    @JsonPropertyDescription("provider.model; overrides spec.defaultModel.")
        @Pattern(Models.PATTERN)
        @Size(max = 256)
        String model,
    @JsonPropertyDescription(
            "Names of mcpServers or of other agents whose tools this agent may call.")
        @Size(max = MAX_REFERENCES)
        List<@Pattern(PallasNames.NAME_PATTERN) @Size(max = 63) String> servers,
    @JsonPropertyDescription(
            "Agents started and ready before this one (agents named in servers are implied).")
        @Size(max = MAX_REFERENCES)
        List<@Pattern(PallasNames.NAME_PATTERN) @Size(max = 63) String> dependsOn,
    @JsonPropertyDescription("Sampling and loop parameters.") RequestParams requestParams,
    @JsonPropertyDescription(
            "Whose conversation a call continues: shared (one history per agent), connection (one"
                + " per MCP session) or request (none kept). Default shared.")
        InstanceScope instanceScope,
    @JsonPropertyDescription("Icons published in the registry.") @Size(max = 16) List<Icon> icons,
    @JsonPropertyDescription(
            "Pod replicas (Kubernetes). Default 1. Not with autoscaling, which sets them.")
        @Min(0)
        Integer replicas,
    @JsonPropertyDescription(
            "A HorizontalPodAutoscaler on calls in flight per pod (Kubernetes); instead of"
                + " replicas.")
        AutoscalingSpec autoscaling,
    @JsonPropertyDescription(
            "The agent Service's session affinity (Kubernetes): None (default) or ClientIP. An"
                + " optimization only: any replica serves any MCP session.")
        SessionAffinity sessionAffinity,
    @JsonPropertyDescription(
            "Container resources (Kubernetes). Default: requests cpu 100m, memory 256Mi; limit"
                + " memory 512Mi.")
        ResourceRequirements resources,
    @JsonPropertyDescription(
            "How much one caller may use this agent; overrides spec.callerLimits. Default: no"
                + " limit.")
        CallerLimitsSpec callerLimits,
    @JsonPropertyDescription(
            "Where this agent's pods run and what they carry (Kubernetes); each field set here"
                + " replaces the same field of spec.pod whole (labels, env and lists are not"
                + " merged).")
        PodSettingsSpec pod) {

  /** Entries of servers or dependsOn; bounds keep the CRD's CEL rules within its cost budget. */
  public static final int MAX_REFERENCES = 32;

  /** The registry's limit (server.json). */
  public static final int MAX_DESCRIPTION = 100;

  public List<String> effectiveServers() {
    return servers == null ? List.of() : servers;
  }

  public List<String> effectiveDependsOn() {
    return dependsOn == null ? List.of() : dependsOn;
  }

  public RequestParams effectiveRequestParams() {
    return requestParams == null ? RequestParams.DEFAULTS : requestParams;
  }

  public InstanceScope effectiveInstanceScope() {
    return instanceScope == null ? InstanceScope.SHARED : instanceScope;
  }

  public SessionAffinity effectiveSessionAffinity() {
    return sessionAffinity == null ? SessionAffinity.NONE : sessionAffinity;
  }

  public List<Icon> effectiveIcons() {
    return icons == null ? List.of() : icons;
  }

  public String effectiveTitle() {
    if (title != null) {
      return title;
    }
    return Character.toUpperCase(name.charAt(0)) + name.substring(1);
  }

  public String effectiveDescription() {
    return description != null ? description : "Pallas agent " + name;
  }

  /** The pods wanted without an autoscaler: replicas, or autoscaling's minimum, or 1. */
  public int effectiveReplicas() {
    if (autoscaling != null) {
      return autoscaling.effectiveMinReplicas();
    }
    return replicas == null ? 1 : replicas;
  }

  /** Whether more than one pod may serve the agent at once (a PodDisruptionBudget is wanted). */
  public boolean replicated() {
    return autoscaling != null ? autoscaling.effectiveMinReplicas() > 1 : effectiveReplicas() > 1;
  }
}
