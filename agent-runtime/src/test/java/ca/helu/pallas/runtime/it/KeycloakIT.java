package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ca.helu.pallas.runtime.auth.AuthFailure;
import ca.helu.pallas.runtime.auth.Caller;
import ca.helu.pallas.runtime.auth.OidcTokens;
import ca.helu.pallas.runtime.auth.TokenExchange;
import ca.helu.pallas.runtime.testing.KeycloakServer;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Inbound OAuth against a real issuer (issue 18 §6): Keycloak, from its distribution on Maven
 * Central, with the realm in src/test/resources/keycloak. Its real tokens are accepted for the
 * audience they name, and refused for another; the helper agent exchanges its caller's token for
 * one meant for its downstream server (Keycloak's standard token exchange, RFC 8693).
 */
class KeycloakIT {
  @RegisterExtension static final KeycloakServer KEYCLOAK = new KeycloakServer();
  private static final String HELPER = "https://agents.pallas.test/helper";

  private static OidcTokens helper(Set<String> scopes) {
    return new OidcTokens(KEYCLOAK.issuer(), HELPER, scopes, Duration.ofSeconds(5));
  }

  @Test
  void aClientCredentialsTokenIsItsServiceAccountThroughItsClient() throws Exception {
    String token = KEYCLOAK.clientToken("daedalus", "daedalus-secret");
    Caller caller = helper(Set.of("agents:call")).authenticate("Bearer " + token);
    assertThat(caller.name()).isNotBlank();
    assertThat(caller.client()).isEqualTo("daedalus");
    assertThat(caller.scopes()).contains("agents:call");
  }

  @Test
  void aUsersTokenIsThatUser() throws Exception {
    String token = KEYCLOAK.userToken("daedalus", "daedalus-secret", "alice", "alice-password");
    String service = KEYCLOAK.clientToken("daedalus", "daedalus-secret");
    OidcTokens auth = helper(Set.of());
    Caller alice = auth.authenticate("Bearer " + token);
    assertThat(alice.client()).isEqualTo("daedalus");
    assertThat(alice.name())
        .as("the user, not the client's service account")
        .isNotEqualTo(auth.authenticate("Bearer " + service).name());
  }

  @Test
  void aTokenMeantForNoAgentIsRefused() {
    String token = KEYCLOAK.clientToken("stranger", "stranger-secret");
    assertThatThrownBy(() -> helper(Set.of()).authenticate("Bearer " + token))
        .isInstanceOfSatisfying(
            AuthFailure.class,
            e -> {
              assertThat(e.code()).isEqualTo(AuthFailure.Code.INVALID_TOKEN);
              assertThat(e.getMessage()).isEqualTo("the token is not meant for this agent (aud)");
            });
  }

  @Test
  void aTokenForAnotherAgentOfTheFleetIsRefused() {
    String token = KEYCLOAK.clientToken("daedalus", "daedalus-secret");
    OidcTokens other =
        new OidcTokens(
            KEYCLOAK.issuer(), "https://agents.pallas.test/other", Set.of(), Duration.ofSeconds(5));
    assertThatThrownBy(() -> other.authenticate("Bearer " + token))
        .isInstanceOf(AuthFailure.class)
        .hasMessage("the token is not meant for this agent (aud)");
  }

  private static TokenExchange helperToTools() {
    return new TokenExchange(
        KEYCLOAK.issuer(),
        "agent-helper",
        "agent-helper-secret",
        "tools",
        null,
        Set.of("tools"),
        Duration.ofSeconds(5));
  }

  @Test
  void theCallersTokenIsExchangedForOneMeantForTheDownstreamServerAndReused() throws Exception {
    String alice = KEYCLOAK.userToken("daedalus", "daedalus-secret", "alice", "alice-password");
    TokenExchange exchange = helperToTools();
    String forTools = exchange.exchange(alice);
    assertThat(forTools).isNotEqualTo(alice);

    Caller asSeenByTools =
        new OidcTokens(KEYCLOAK.issuer(), "tools", Set.of("tools"), Duration.ofSeconds(5))
            .authenticate("Bearer " + forTools);
    assertThat(asSeenByTools.name())
        .as("still alice")
        .isEqualTo(helper(Set.of()).authenticate("Bearer " + alice).name());
    assertThat(asSeenByTools.client()).isEqualTo("agent-helper");
    assertThatThrownBy(() -> helper(Set.of()).authenticate("Bearer " + forTools))
        .as("not a token for the agent itself")
        .isInstanceOf(AuthFailure.class);

    assertThat(exchange.exchange(alice))
        .as("reused until shortly before it expires")
        .isEqualTo(forTools);
  }

  /**
   * RFC 8707's resource beside the audience (mcpServers[].tokenExchange.resource): Keycloak's
   * standard token exchange takes the request and grants the audience of audience and scopes alone
   * (docs/runtime.md, "Downstream credentials").
   */
  @Test
  void aResourceIsSentBesideTheAudience() throws Exception {
    String alice = KEYCLOAK.userToken("daedalus", "daedalus-secret", "alice", "alice-password");
    TokenExchange withResource =
        new TokenExchange(
            KEYCLOAK.issuer(),
            "agent-helper",
            "agent-helper-secret",
            "tools",
            "http://tools.pallas.test/mcp",
            Set.of("tools"),
            Duration.ofSeconds(5));
    String forTools = withResource.exchange(alice);
    assertThat(com.nimbusds.jwt.SignedJWT.parse(forTools).getJWTClaimsSet().getAudience())
        .as("the audience Keycloak grants comes from audience and scopes, not resource")
        .containsExactly("tools");
    assertThat(
            new OidcTokens(KEYCLOAK.issuer(), "tools", Set.of("tools"), Duration.ofSeconds(5))
                .authenticate("Bearer " + forTools)
                .client())
        .isEqualTo("agent-helper");
  }

  @Test
  void aTokenTheAgentMayNotExchangeIsRefusedByTheIssuerWithItsReason() {
    String stranger = KEYCLOAK.clientToken("stranger", "stranger-secret");
    assertThatThrownBy(() -> helperToTools().exchange(stranger))
        .isInstanceOf(TokenExchange.Failure.class)
        .hasMessageStartingWith("the issuer refused to exchange the caller's token for tools: ")
        .message()
        .doesNotContain(stranger.substring(0, 30));
  }
}
