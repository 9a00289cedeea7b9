package ca.helu.pallas.api;

import ca.helu.pallas.api.validation.Formats;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;

/** The registry that publishes every agent at /.well-known/mcp/server.json. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RegistrySpec(
    @JsonPropertyDescription("Registry Service/listen port. Default 24200.") @Min(1) @Max(65535)
        Integer port,
    @JsonPropertyDescription(
            "Reverse-domain prefix of registry server names, e.g. ca.helu.ouranos. Default"
                + " local.pallas.")
        @Pattern(Formats.REGISTRY_NAMESPACE)
        @Size(max = 200)
        String namespace) {

  public static final int DEFAULT_PORT = 24200;
  public static final String DEFAULT_NAMESPACE = "local.pallas";

  public int effectivePort() {
    return port == null ? DEFAULT_PORT : port;
  }

  public String effectiveNamespace() {
    return namespace == null ? DEFAULT_NAMESPACE : namespace;
  }
}
