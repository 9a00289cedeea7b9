package ca.helu.pallas.operator.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.testing.Fixtures;
import ca.helu.pallas.operator.testing.KubeCluster;
import ca.helu.pallas.operator.testing.TestOperator;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every fleet gets a NetworkPolicy (docs/operator.md, "Network"; issue 18 §4), which the real API
 * server accepts (it validates NetworkPolicies as it stores them): the fleet's own pods on every
 * port; the peers of {@code from} (default: the fleet's namespace), the operator and Prometheus on
 * the MCP ports; the agents' probe ports from anywhere. Turned off, it is deleted.
 */
class NetworkPolicyIT {
  private static final KubernetesClient K8S = KubeCluster.shared().client();
  private static final String SPEC =
      """
        defaultModel: passthrough
        registry: {port: 24400}
        agents:
          - {name: a, port: 24401}
          - {name: b, port: 24402}
      """;

  @Test
  void aFleetAdmitsItsNamespaceTheOperatorAndPrometheusOnItsPortsAndProbesFromAnywhere() {
    TestOperator.shared();
    String ns = KubeCluster.shared().namespace("netpol");
    PallasDeployment d = Fixtures.create("guarded", ns, SPEC);

    NetworkPolicy policy = awaitPolicy(ns);
    assertThat(policy.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(o -> assertThat(o.getUid()).isEqualTo(Fixtures.get(d).getMetadata().getUid()));
    assertThat(policy.getSpec().getPodSelector().getMatchLabels())
        .isEqualTo(PallasNames.fleetSelector("guarded"));
    assertThat(policy.getSpec().getPolicyTypes()).containsExactly("Ingress");
    List<NetworkPolicyIngressRule> rules = policy.getSpec().getIngress();
    assertThat(rules).hasSize(5);
    // the fleet's own pods, every port
    assertThat(rules.get(0).getPorts()).isEmpty();
    assertThat(rules.get(0).getFrom())
        .singleElement()
        .satisfies(p -> {
          assertThat(p.getNamespaceSelector()).isNull();
          assertThat(p.getPodSelector().getMatchLabels())
              .isEqualTo(PallasNames.fleetSelector("guarded"));
        });
    // by default every pod of the fleet's namespace, on the agents' and the registry's ports
    assertThat(ports(rules.get(1))).containsExactly(24401, 24402, 24400);
    assertThat(rules.get(1).getFrom())
        .singleElement()
        .satisfies(p -> {
          assertThat(p.getNamespaceSelector()).isNull();
          assertThat(p.getPodSelector().getMatchLabels()).isNullOrEmpty();
        });
    // the operator's pods in its namespace, on the agents' ports
    assertThat(ports(rules.get(2))).containsExactly(24401, 24402);
    NetworkPolicyPeer operator = rules.get(2).getFrom().getFirst();
    assertThat(operator.getNamespaceSelector().getMatchLabels())
        .isEqualTo(Map.of("kubernetes.io/metadata.name", TestOperator.CONFIG.leaseNamespace()));
    assertThat(operator.getPodSelector().getMatchLabels())
        .isEqualTo(Map.of("app.kubernetes.io/name", "pallas-operator"));
    // Prometheus in any namespace, where /metrics is served
    assertThat(ports(rules.get(3))).containsExactly(24401, 24402, 24400);
    NetworkPolicyPeer prometheus = rules.get(3).getFrom().getFirst();
    assertThat(prometheus.getNamespaceSelector().getMatchLabels()).isNullOrEmpty();
    assertThat(prometheus.getPodSelector().getMatchLabels())
        .isEqualTo(Map.of("app.kubernetes.io/name", "prometheus"));
    // the probe ports, from anywhere
    assertThat(rules.get(4).getFrom()).isEmpty();
    assertThat(ports(rules.get(4))).containsExactly(PallasNames.PROBE_PORT);

    // named peers replace the default; turned off, the policy goes
    Fixtures.replaceSpec(
        d,
        SPEC
            + """
              networkPolicy:
                from:
                  - {namespace: daedalus}
                  - {namespace: "*", podLabels: {app: daedalus}}
            """);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> awaitPolicy(ns).getSpec().getIngress().get(1).getFrom().size() == 2);
    List<NetworkPolicyPeer> from = awaitPolicy(ns).getSpec().getIngress().get(1).getFrom();
    assertThat(from.get(0).getNamespaceSelector().getMatchLabels())
        .isEqualTo(Map.of("kubernetes.io/metadata.name", "daedalus"));
    assertThat(from.get(1).getNamespaceSelector().getMatchLabels()).isNullOrEmpty();
    assertThat(from.get(1).getPodSelector().getMatchLabels()).isEqualTo(Map.of("app", "daedalus"));

    Fixtures.replaceSpec(d, SPEC + "  networkPolicy: {enabled: false}\n");
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> K8S.network().v1().networkPolicies().inNamespace(ns).list().getItems().isEmpty());
  }

  private static NetworkPolicy awaitPolicy(String ns) {
    return await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                K8S.network()
                    .v1()
                    .networkPolicies()
                    .inNamespace(ns)
                    .withName(PallasNames.networkPolicy("guarded"))
                    .get(),
            p -> p != null);
  }

  private static List<Integer> ports(NetworkPolicyIngressRule rule) {
    return rule.getPorts().stream()
        .map(NetworkPolicyPort::getPort)
        .map(IntOrString::getIntVal)
        .toList();
  }
}
