package ca.helu.pallas.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * A secret: exactly one of an inline value (discouraged), an environment variable, or a Kubernetes
 * Secret key. Secrets are never written into ConfigMaps, logs or status.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
    value =
        "(has(self.value) ? 1 : 0) + (has(self.env) ? 1 : 0) + (has(self.secretKeyRef) ? 1 : 0)"
            + " == 1",
    message = "set exactly one of value, env and secretKeyRef")
public record SecretValue(
    @JsonPropertyDescription("Inline value. Discouraged: it is stored in the resource.")
        String value,
    @JsonPropertyDescription("Name of an environment variable holding the value.")
        @Pattern(DeploymentValidator.ENV_NAME_PATTERN)
        @Size(max = 256)
        String env,
    @JsonPropertyDescription("A key of a Secret in the same namespace.")
        SecretKeyRef secretKeyRef) {

  /** A Secret key reference. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record SecretKeyRef(
      @JsonPropertyDescription("Secret name.")
          @Required
          @Pattern(DeploymentValidator.SECRET_NAME_PATTERN)
          @Size(max = 253)
          String name,
      @JsonPropertyDescription("Key within the Secret.")
          @Required
          @Pattern("^[-._a-zA-Z0-9]+$")
          @Size(max = 253)
          String key) {}
}
