package ca.helu.pallas.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.List;

/** A downstream MCP server reached over Streamable HTTP. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record McpServerSpec(
    @JsonPropertyDescription(
            "Name used in agents' servers lists and in tool names {server}__{tool}.")
        @Required
        @Pattern(PallasNames.NAME_PATTERN)
        @Size(max = 63)
        String name,
    @JsonPropertyDescription("Streamable HTTP endpoint, e.g. http://argos.mcp:8080/mcp.")
        @Required
        @ValidationRule(
            value = DeploymentValidator.CEL_HTTP_URL,
            message = "must be an http:// or https:// URL with a host")
        @Size(max = 2048)
        String url,
    @JsonPropertyDescription("Headers sent with every request to this server.") @Size(max = 32)
        List<HeaderSpec> headers,
    @JsonPropertyDescription(
            "When true, the caller's Authorization bearer rides this server's calls, for that call"
                + " only. An explicit Authorization header wins.")
        Boolean forwardInboundAuth,
    @JsonPropertyDescription(
            "Seconds a tool call on this server may take before it fails. Default 120.")
        @Min(1)
        Integer timeoutSeconds) {

  public static final int DEFAULT_TIMEOUT_SECONDS = 120;

  public int effectiveTimeoutSeconds() {
    return timeoutSeconds == null ? DEFAULT_TIMEOUT_SECONDS : timeoutSeconds;
  }

  public List<HeaderSpec> effectiveHeaders() {
    return headers == null ? List.of() : headers;
  }

  public boolean effectiveForwardInboundAuth() {
    return forwardInboundAuth != null && forwardInboundAuth;
  }
}
