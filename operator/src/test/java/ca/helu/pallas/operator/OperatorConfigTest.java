package ca.helu.pallas.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class OperatorConfigTest {
  @Test
  void defaults() {
    OperatorConfig c = OperatorConfig.fromEnvironment(Map.of());
    assertThat(c.watchNamespaces()).isEmpty();
    assertThat(c.runtimeImage()).isEqualTo(OperatorConfig.DEFAULT_RUNTIME_IMAGE);
    assertThat(c.imagePullPolicy()).isEqualTo("IfNotPresent");
    assertThat(c.imagePullSecrets()).isEmpty();
    assertThat(c.leaderElection()).isFalse();
    assertThat(c.leaseName()).isEqualTo("pallas-operator");
    assertThat(c.leaseNamespace()).isEqualTo("default");
    assertThat(c.leaseIdentity())
        .as("outside a pod, an identity no other replica has")
        .startsWith("pallas-operator-")
        .isNotEqualTo(OperatorConfig.fromEnvironment(Map.of()).leaseIdentity());
    assertThat(c.httpPort()).isEqualTo(8080);
    assertThat(c.drainSeconds()).isEqualTo(30);
    assertThat(c.resourceSelector()).isNull();
    assertThat(c.verifyInterval()).isEqualTo(Duration.ofMinutes(5));
    assertThat(c.defaultStoreSecret()).as("fleets without spec.store: memory").isNull();
  }

  @Test
  void everyVariableIsRead() {
    OperatorConfig c =
        OperatorConfig.fromEnvironment(
            Map.of(
                "PALLAS_WATCH_NAMESPACES", " ai, tools ,,",
                "PALLAS_RUNTIME_IMAGE", "r/p:1",
                "PALLAS_LEADER_ELECTION", "true",
                "POD_NAMESPACE", "pallas-system",
                "HOSTNAME", "pallas-operator-7d9f-x2k",
                "PALLAS_LOG_LEVEL", "debug",
                "PALLAS_HTTP_PORT", "9090",
                "PALLAS_RESOURCE_SELECTOR", "tier=canary",
                "PALLAS_IMAGE_PULL_SECRETS", "regcred, other",
                "PALLAS_VERIFY_INTERVAL_SECONDS", "60"));
    assertThat(c.watchNamespaces()).containsExactlyInAnyOrder("ai", "tools");
    assertThat(c.leaderElection()).isTrue();
    assertThat(c.leaseNamespace()).isEqualTo("pallas-system");
    assertThat(c.leaseIdentity()).as("the pod's name").isEqualTo("pallas-operator-7d9f-x2k");
    assertThat(c.logLevel()).isEqualTo("DEBUG");
    assertThat(c.httpPort()).isEqualTo(9090);
    assertThat(c.resourceSelector()).isEqualTo("tier=canary");
    assertThat(c.imagePullSecrets()).containsExactly("regcred", "other");
    assertThat(c.verifyInterval()).isEqualTo(Duration.ofSeconds(60));
    assertThat(
            OperatorConfig.fromEnvironment(Map.of("PALLAS_DEFAULT_STORE_SECRET", " pallas-store "))
                .defaultStoreSecret())
        .isEqualTo("pallas-store");
  }

  @Test
  void aBadValueIsNamed() {
    assertThatThrownBy(() -> OperatorConfig.fromEnvironment(Map.of("PALLAS_HTTP_PORT", "http")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("PALLAS_HTTP_PORT: 'http' is not a number");
    assertThatThrownBy(
            () -> OperatorConfig.fromEnvironment(Map.of("PALLAS_LEADER_ELECTION", "yes")))
        .hasMessage("PALLAS_LEADER_ELECTION: 'yes' must be true or false");
    // beyond the 10-minute periodic check, an agent would be forgotten between two handshakes
    assertThatThrownBy(
            () -> OperatorConfig.fromEnvironment(Map.of("PALLAS_VERIFY_INTERVAL_SECONDS", "900")))
        .hasMessage(
            "PALLAS_VERIFY_INTERVAL_SECONDS: 900 must be from 0 (agents are not asked) to 600");
    assertThatThrownBy(
            () -> OperatorConfig.fromEnvironment(Map.of("PALLAS_DEFAULT_STORE_SECRET", "My_Store")))
        .hasMessage("PALLAS_DEFAULT_STORE_SECRET: 'My_Store' is not a Secret's name");
  }
}
