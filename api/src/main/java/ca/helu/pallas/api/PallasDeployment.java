package ca.helu.pallas.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.fabric8.kubernetes.api.model.ObjectMeta;

/**
 * A PallasDeployment manifest as it appears in a file or in the API server: one fleet of agents,
 * their downstream MCP servers, model providers and registry.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonPropertyOrder({"apiVersion", "kind", "metadata", "spec", "status"})
public record PallasDeployment(
    @JsonPropertyDescription("Must be " + PallasDeployment.API_VERSION) String apiVersion,
    @JsonPropertyDescription("Must be " + PallasDeployment.KIND) String kind,
    @JsonPropertyDescription("Standard object metadata; name is required") ObjectMeta metadata,
    @JsonPropertyDescription("The desired fleet") PallasDeploymentSpec spec,
    @JsonPropertyDescription("Observed state, written by the operator")
        PallasDeploymentStatus status) {

  public static final String GROUP = "pallas.helu.ca";
  public static final String VERSION = "v1alpha1";
  public static final String API_VERSION = GROUP + "/" + VERSION;
  public static final String KIND = "PallasDeployment";

  /** The metadata name, or {@code null} when absent. */
  public String name() {
    return metadata == null ? null : metadata.getName();
  }
}
