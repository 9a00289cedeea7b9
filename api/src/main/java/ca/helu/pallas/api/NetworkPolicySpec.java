package ca.helu.pallas.api;

import ca.helu.pallas.api.validation.Formats;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import java.util.List;
import java.util.Map;

/**
 * Who may reach the fleet's pods on a cluster: the operator renders one NetworkPolicy per fleet
 * from this (docs/operator.md, "Network"). The fleet's own pods (agents calling agents, the
 * registry) and the operator (its MCP handshake, docs/status.md) are always admitted; probe ports
 * are open to all.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record NetworkPolicySpec(
    @JsonPropertyDescription("Render the fleet's NetworkPolicy (Kubernetes). Default true.")
        Boolean enabled,
    @JsonPropertyDescription(
            "Who may call the agents and the registry besides the fleet's own pods. Default: every"
                + " pod of the fleet's namespace.")
        @Size(max = 32)
        List<Peer> from,
    @JsonPropertyDescription(
            "Who may scrape /metrics, which the agents and the registry serve on their MCP ports."
                + " Default: pods labelled app.kubernetes.io/name=prometheus in any namespace (the"
                + " Prometheus Operator's).")
        @Size(max = 32)
        List<Peer> metricsFrom) {

  /** Any namespace, in {@link Peer#namespace}. */
  public static final String ANY_NAMESPACE = "*";

  /** Pods the policy admits. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record Peer(
      @JsonPropertyDescription(
              "A namespace by name, or * for every namespace. Default: the fleet's namespace.")
          @Pattern(Formats.NAMESPACE)
          @Size(max = 63)
          String namespace,
      @JsonPropertyDescription("Pods with all of these labels. Default: every pod.")
          Map<String, String> podLabels) {}

  public boolean effectiveEnabled() {
    return enabled == null || enabled;
  }

  /** {@code from}, or every pod of the fleet's namespace. */
  public List<Peer> effectiveFrom() {
    return from == null ? List.of(new Peer(null, null)) : from;
  }

  /** {@code metricsFrom}, or the Prometheus Operator's Prometheus pods in any namespace. */
  public List<Peer> effectiveMetricsFrom() {
    return metricsFrom == null
        ? List.of(new Peer(ANY_NAMESPACE, Map.of("app.kubernetes.io/name", "prometheus")))
        : metricsFrom;
  }
}
