package ca.helu.pallas.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/**
 * A secret: exactly one of an inline value (discouraged), an environment variable, or a Kubernetes
 * Secret key. Secrets are never written into ConfigMaps, logs or status.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record SecretValue(
    @JsonPropertyDescription("Inline value. Discouraged: it is stored in the resource.")
        String value,
    @JsonPropertyDescription("Name of an environment variable holding the value.") String env,
    @JsonPropertyDescription("A key of a Secret in the same namespace.")
        SecretKeyRef secretKeyRef) {

  /** A Secret key reference. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record SecretKeyRef(
      @JsonPropertyDescription("Secret name.") String name,
      @JsonPropertyDescription("Key within the Secret.") String key) {}
}
