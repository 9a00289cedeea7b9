package ca.helu.pallas.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.kubernetes.api.model.ResourceRequirements;

/**
 * Agents that share one pod (Kubernetes): one process serves them all, each on its own Service,
 * port, metrics and probes, at a few MiB per further agent instead of a JVM each (docs/operator.md,
 * "Agents sharing a pod"). Its pods' count, resources and settings are the group's, not its
 * agents'.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record PodGroupSpec(
    @JsonPropertyDescription(
            "Names the group's Deployment, X-<name>: lower-case letters, digits, '-' and '_'; not"
                + " the name of an agent, nor registry.")
        @Required
        @Pattern(PallasNames.NAME_PATTERN)
        @Size(max = 63)
        String name,
    @JsonPropertyDescription(
            "Pods of the group, each serving every agent of the group. Default 1. A group is not"
                + " autoscaled.")
        @Min(0)
        Integer replicas,
    @JsonPropertyDescription(
            "Container resources of each of the group's pods. Default: requests cpu 100m, memory"
                + " 256Mi; limit memory 512Mi.")
        ResourceRequirements resources,
    @JsonPropertyDescription(
            "Where the group's pods run and what they carry; each field set here replaces the same"
                + " field of spec.pod whole, as agents[].pod does for an agent in a pod of its"
                + " own.")
        PodSettingsSpec pod) {

  public int effectiveReplicas() {
    return replicas == null ? 1 : replicas;
  }
}
