package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ca.helu.pallas.runtime.auth.AuthFailure;
import ca.helu.pallas.runtime.auth.Caller;
import ca.helu.pallas.runtime.auth.OidcTokens;
import ca.helu.pallas.runtime.testing.KeycloakServer;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Inbound OAuth against a real issuer (issue 18 §6): Keycloak, from its distribution on Maven
 * Central, with the realm in src/test/resources/keycloak. Its real tokens are accepted for the
 * audience they name, and refused for another.
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
}
