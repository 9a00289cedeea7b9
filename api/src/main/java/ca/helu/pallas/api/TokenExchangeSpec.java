package ca.helu.pallas.api;

import ca.helu.pallas.api.validation.Formats;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import java.util.List;

/**
 * A downstream server reached with a token exchanged for the caller's (RFC 8693; docs/runtime.md,
 * "Downstream credentials"): the agent, as the OAuth client {@code spec.auth.oidc.client}, trades
 * the caller's token at the issuer for one meant for this server, which sees the caller and never
 * the caller's own token.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record TokenExchangeSpec(
    @JsonPropertyDescription(
            "The server's logical name at the issuer, sent as the exchange's audience (RFC 8693"
                + " §2.1); with Keycloak, the server's client id.")
        @Pattern(Formats.NOT_BLANK)
        @Size(max = 2048)
        String audience,
    @JsonPropertyDescription(
            "The server's resource identifier, an absolute URI sent as the exchange's resource"
                + " (RFC 8707), for issuers that grant by it (Keycloak takes it, but grants the"
                + " audience of audience and scopes).")
        @Size(max = 2048)
        String resource,
    @JsonPropertyDescription(
            "Scopes to ask for; with Keycloak, an optional client scope of the agents' client that"
                + " maps the server's audience. Default: none asked.")
        @Size(max = OidcAuthSpec.MAX_SCOPES)
        List<@Pattern(Formats.SCOPE) @Size(max = 256) String> scopes) {

  public List<String> effectiveScopes() {
    return scopes == null ? List.of() : scopes;
  }
}
