package ca.helu.pallas.api;

import ca.helu.pallas.api.validation.Formats;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import java.util.List;

/**
 * The OIDC issuer whose access tokens the agents accept (docs/runtime.md, "Inbound
 * authentication"), e.g. a Keycloak realm.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record OidcAuthSpec(
    @JsonPropertyDescription(
            "The issuer, exactly as its tokens' iss claim, e.g."
                + " https://keycloak.example/realms/pallas; its discovery document is read from"
                + " {issuerUrl}/.well-known/openid-configuration.")
        @Required
        @Size(max = 2048)
        String issuerUrl,
    @JsonPropertyDescription(
            "What a token's aud claim must contain; {agent} is replaced by the agent's name."
                + " Default: the agent's own MCP URL (its resource identifier, as its protected"
                + " resource metadata publishes it).")
        @Pattern(Formats.NOT_BLANK)
        @Size(max = 2048)
        String audience,
    @JsonPropertyDescription("Scopes every token must carry (its scope claim). Default: none.")
        @Size(max = MAX_SCOPES)
        List<@Pattern(Formats.SCOPE) @Size(max = 256) String> requiredScopes,
    @JsonPropertyDescription(
            "Allows mcpServers[].forwardInboundAuth: passing a caller's token, issued for these"
                + " agents, on to another server, which the MCP authorization specification"
                + " forbids (docs/runtime.md, \"Bearer propagation\"). Default false: such a"
                + " manifest is refused.")
        Boolean allowForwarding,
    @JsonPropertyDescription(
            "The agents' own OAuth client at this issuer, with which they exchange callers' tokens"
                + " for the servers that set mcpServers[].tokenExchange (RFC 8693). Needed by"
                + " tokenExchange.")
        OAuthClientSpec client) {

  /** Entries of requiredScopes. */
  public static final int MAX_SCOPES = 32;

  /** Placeholder of {@link #audience()} for the agent's name. */
  public static final String AGENT_PLACEHOLDER = "{agent}";

  public boolean forwardingAllowed() {
    return allowForwarding != null && allowForwarding;
  }

  public List<String> effectiveRequiredScopes() {
    return requiredScopes == null ? List.of() : requiredScopes;
  }

  /** The audience an agent's tokens must carry, given its resource identifier (its MCP URL). */
  public String audienceOf(String agent, String resource) {
    return audience == null ? resource : audience.replace(AGENT_PLACEHOLDER, agent);
  }
}
