package ca.helu.pallas.operator.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.OperatorConfig.ServiceAccountRef;
import ca.helu.pallas.operator.testing.KubeCluster;
import ca.helu.pallas.operator.verify.OperatorTokens;
import ca.helu.pallas.runtime.auth.AgentTokens;
import ca.helu.pallas.runtime.auth.AuthFailure;
import ca.helu.pallas.runtime.auth.ServiceAccountTokens;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Agents' identities in a cluster against a real API server (issue 18 §3; docs/runtime.md, "Agents
 * calling agents"): a ServiceAccount token with the called agent's resource identifier as audience,
 * as the kubelet projects it into the calling agent's pod (here a TokenRequest, which is what the
 * kubelet makes), is checked by the called agent against the API server's own service-account
 * issuer, read from the API server with a token of the called agent's pod. Only the accounts of the
 * agents that call it, and the operator's, are known; a token for another agent, of another account
 * or of another issuer is not taken.
 */
class AgentIdentityIT {
  private static final KubernetesClient K8S = KubeCluster.shared().client();
  private static final String HELPER = "http://fleet-helper.ns.svc:24201/mcp";
  private static String ns;

  @TempDir static Path pod;

  private static ServiceAccountTokens helper;

  @BeforeAll
  static void accounts() throws Exception {
    ns = KubeCluster.shared().namespace("identity");
    for (String account :
        new String[] {"fleet-lead", "fleet-helper", "fleet-g", "stranger", "operator"}) {
      K8S.serviceAccounts()
          .inNamespace(ns)
          .resource(
              new ServiceAccountBuilder().withNewMetadata().withName(account).endMetadata().build())
          .create();
    }
    // the called agent's pod: its token for the API server and the API server's CA, as the
    // operator projects them (Pods.identity)
    Files.createDirectories(pod.resolve("kubernetes"));
    Files.writeString(pod.resolve(PallasNames.API_TOKEN_FILE), token("fleet-helper", null));
    Config admin = K8S.getConfiguration();
    Files.write(
        pod.resolve(PallasNames.API_CA_FILE),
        admin.getCaCertData() != null
            ? Base64.getDecoder().decode(admin.getCaCertData())
            : Files.readAllBytes(Path.of(admin.getCaCertFile())));
    URI api = URI.create(admin.getMasterUrl());
    helper =
        new ServiceAccountTokens(
            ServiceAccountTokens.ApiServer.of(api.getHost(), Integer.toString(api.getPort()), pod),
            HELPER,
            Map.of(
                PallasNames.serviceAccountSubject(ns, "fleet-lead"),
                new AgentTokens.Identity("lead"),
                // pod group g's agents scout and scribe both call helper
                PallasNames.serviceAccountSubject(ns, "fleet-g"),
                new AgentTokens.Identity(Set.of("scout", "scribe")),
                PallasNames.serviceAccountSubject(ns, "operator"),
                AgentTokens.Identity.OBSERVER),
            Duration.ofSeconds(5));
  }

  /** A token of {@code account}, for {@code audience} (null: the API server's own). */
  private static String token(String account, String audience) {
    var spec = new TokenRequestBuilder().withNewSpec().withExpirationSeconds(600L);
    if (audience != null) {
      spec.withAudiences(audience);
    }
    return K8S.serviceAccounts()
        .inNamespace(ns)
        .withName(account)
        .tokenRequest(spec.endSpec().build())
        .getStatus()
        .getToken();
  }

  @Test
  void theCallingAgentsProjectedTokenNamesIt() throws Exception {
    assertThat(helper.identify(token("fleet-lead", HELPER)))
        .contains(new AgentTokens.Identity("lead"));
    assertThat(helper.problem()).isEmpty();
  }

  @Test
  void aPodGroupsTokenNamesTheAgentsThatShareIt() throws Exception {
    assertThat(helper.identify(token("fleet-g", HELPER)))
        .contains(new AgentTokens.Identity(Set.of("scout", "scribe")));
  }

  @Test
  void theOperatorsTokenIsTheOperator() throws Exception {
    OperatorTokens operator =
        new OperatorTokens(K8S, new ServiceAccountRef(ns, "operator"), Clock.systemUTC());
    String token = operator.forAudience(HELPER);
    assertThat(helper.identify(token)).contains(AgentTokens.Identity.OBSERVER);
    assertThat(operator.forAudience(HELPER)).as("reused while fresh").isEqualTo(token);
  }

  @Test
  void aTokenForAnotherAgentOrOfAnotherAccountIsRefused() {
    assertThatThrownBy(
            () -> helper.identify(token("fleet-lead", "http://fleet-other.ns.svc:24203/mcp")))
        .isInstanceOf(AuthFailure.class)
        .hasMessage("the token is not meant for this agent (aud)");
    assertThatThrownBy(() -> helper.identify(token("stranger", HELPER)))
        .isInstanceOf(AuthFailure.class)
        .hasMessage("the token's ServiceAccount is not one of an agent that calls this agent");
  }

  @Test
  void aTokenOfAnotherIssuerIsACallersAndNoJwtIsNoAgents() throws Exception {
    // an OIDC access token of another issuer, signed or not, is left to the caller's checks
    String otherIssuer =
        Base64.getUrlEncoder().withoutPadding().encodeToString("{\"alg\":\"none\"}".getBytes())
            + "."
            + Base64.getUrlEncoder()
                .withoutPadding()
                .encodeToString(
                    "{\"iss\":\"https://keycloak.example/realms/p\",\"sub\":\"x\"}".getBytes())
            + ".";
    assertThat(helper.identify(otherIssuer)).isEqualTo(Optional.empty());
    assertThat(helper.identify("a-static-token")).isEqualTo(Optional.empty());
  }
}
