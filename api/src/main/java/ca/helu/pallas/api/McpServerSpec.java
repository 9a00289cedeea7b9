package ca.helu.pallas.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import java.util.List;

/**
 * A downstream MCP server reached over Streamable HTTP, and what its requests carry to say who asks
 * (docs/runtime.md, "Downstream credentials"): a credential of its own ({@code headers}), the
 * caller's token exchanged for one meant for it ({@code tokenExchange}), or the caller's own token
 * ({@code forwardInboundAuth}).
 */
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
        @Size(max = 2048)
        String url,
    @JsonPropertyDescription(
            "Headers sent with every request to this server; a credential of its own is an"
                + " Authorization header from a Secret (valueFrom.secretKeyRef).")
        @Size(max = 32)
        List<HeaderSpec> headers,
    @JsonPropertyDescription(
            "When true, the caller's Authorization bearer rides this server's calls, for that call"
                + " only. An explicit Authorization header wins. With spec.auth.oidc it also needs"
                + " spec.auth.oidc.allowForwarding; prefer tokenExchange.")
        Boolean forwardInboundAuth,
    @JsonPropertyDescription(
            "Each call carries a token the issuer of spec.auth.oidc exchanged for the caller's"
                + " (RFC 8693), meant for this server (its audience or resource), obtained by the"
                + " agents' client spec.auth.oidc.client and reused until shortly before it"
                + " expires.")
        TokenExchangeSpec tokenExchange,
    @JsonPropertyDescription(
            "Seconds a tool call on this server may take before it fails. Default 120.")
        @Min(1)
        Integer timeoutSeconds,
    @JsonPropertyDescription(
            "Tool calls to this server in flight at once, all of an agent's callers together; more"
                + " wait (at most timeoutSeconds) for a free place. Default 256.")
        @Min(1)
        @Max(100000)
        Integer maxConcurrentCalls) {

  public static final int DEFAULT_TIMEOUT_SECONDS = 120;

  /**
   * Above what one agent sends a server under normal load, so calls never wait there today; below
   * the 512 requests an agent answers at once, so a peer agent is never asked for more than it
   * takes (docs/runtime.md, Limits).
   */
  public static final int DEFAULT_MAX_CONCURRENT_CALLS = 256;

  public int effectiveMaxConcurrentCalls() {
    return maxConcurrentCalls == null ? DEFAULT_MAX_CONCURRENT_CALLS : maxConcurrentCalls;
  }

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
