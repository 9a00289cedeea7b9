package ca.helu.pallas.api;

import ca.helu.pallas.api.validation.Formats;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/**
 * A secret: exactly one of an inline value (discouraged), an environment variable, or a Kubernetes
 * Secret key. Secrets are never written into ConfigMaps, logs or status.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record SecretValue(
    @JsonPropertyDescription("Inline value. Discouraged: it is stored in the resource.")
        String value,
    @JsonPropertyDescription("Name of an environment variable holding the value.")
        @Pattern(Formats.ENV_NAME)
        @Size(max = 256)
        String env,
    @JsonPropertyDescription("A key of a Secret in the same namespace.")
        SecretKeyRef secretKeyRef) {

  /** A Secret key reference. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record SecretKeyRef(
      @JsonPropertyDescription("Secret name.")
          @Required
          @Pattern(Formats.DNS_SUBDOMAIN)
          @Size(max = 253)
          String name,
      @JsonPropertyDescription("Key within the Secret.")
          @Required
          @Pattern(Formats.SECRET_KEY)
          @Size(max = 253)
          String key) {}
}
