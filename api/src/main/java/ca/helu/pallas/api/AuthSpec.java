package ca.helu.pallas.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/**
 * Who may call the agents (docs/runtime.md, "Inbound authentication"): every agent's /mcp asks for
 * a bearer token, an OIDC access token or one of the static tokens of a Secret. Without this block
 * anyone who reaches an agent's port may call it.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record AuthSpec(
    @JsonPropertyDescription(
            "OAuth 2.1 resource server: bearer JWTs of this OIDC issuer, checked against its"
                + " discovery document and keys.")
        OidcAuthSpec oidc,
    @JsonPropertyDescription(
            "Static bearer tokens from a Secret: each key is a caller's name, its value that"
                + " caller's token.")
        StaticTokensSpec staticTokens,
    @JsonPropertyDescription(
            "When true, a client without a token may initialize and call get_health (and ping and"
                + " tools/list) but nothing else, so a health poller needs no token. Default"
                + " true.")
        Boolean openHealth) {

  public boolean effectiveOpenHealth() {
    return openHealth == null || openHealth;
  }
}
