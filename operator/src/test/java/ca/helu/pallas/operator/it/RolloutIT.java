package ca.helu.pallas.operator.it;

import static ca.helu.pallas.operator.testing.Fixtures.agentDeployment;
import static ca.helu.pallas.operator.testing.Fixtures.awaitAndMarkAvailable;
import static ca.helu.pallas.operator.testing.Fixtures.configHash;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.operator.testing.Fixtures;
import ca.helu.pallas.operator.testing.KubeCluster;
import ca.helu.pallas.operator.testing.TestOperator;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * A change rolls exactly the pods that read it: one agent's spec, a rotated Secret key (the
 * registry's too when its call_tool sends it), and not a replica count (which scales without a new
 * pod template).
 */
class RolloutIT {
  private static final KubernetesClient K8S = KubeCluster.shared().client();
  private static final List<String> AGENTS = List.of("a", "b", "c");

  /** The registry's place among the hashes: it reads the header keys of b's server too. */
  private static final String REGISTRY = "registry";

  private static final String SPEC =
      """
        defaultModel: passthrough
        providers:
          openai: {baseUrl: "http://llm:8080/v1", apiKey: {secretKeyRef: {name: llm, key: openai}}}
          anthropic: {apiKey: {secretKeyRef: {name: llm, key: anthropic}}}
        mcpServers:
          - name: tools
            url: http://tools:8080/mcp
            headers: [{name: Authorization, valueFrom: {secretKeyRef: {name: tools, key: token}}}]
        agents:
          - {name: a, model: openai.qwen3, instruction: one}
          - {name: b, instruction: two, servers: [tools]}
          - {name: c, model: anthropic.claude-sonnet-4-5, replicas: 1}
      """;

  @Test
  void changesRollExactlyThePodsThatUseThem() {
    TestOperator.shared();
    String ns = KubeCluster.shared().namespace("rollout");
    Fixtures.secret(ns, "llm", Map.of("openai", "k1", "anthropic", "k2"));
    Fixtures.secret(ns, "tools", Map.of("token", "t1"));
    PallasDeployment d = Fixtures.create("fleet", ns, SPEC);
    AGENTS.forEach(agent -> awaitAndMarkAvailable(d, agent));
    Fixtures.awaitRegistryAndMarkAvailable(d);
    Map<String, String> hashes = hashes(d);
    assertThat(hashes.values()).doesNotContainNull().doesNotHaveDuplicates();

    // one agent's instruction: only b rolls (the registry follows the spec without a restart)
    Fixtures.replaceSpec(d, SPEC.replace("instruction: two", "instruction: 2"));
    hashes = awaitOnlyChanged(d, hashes, "b");

    // a rotated key: only the agent whose provider uses it rolls
    Fixtures.secret(ns, "llm", Map.of("openai", "k1-rotated", "anthropic", "k2"));
    hashes = awaitOnlyChanged(d, hashes, "a");
    // a server's header: the agent calling it, and the registry, whose call_tool calls it too
    Fixtures.secret(ns, "tools", Map.of("token", "t2"));
    hashes = awaitOnlyChanged(d, hashes, "b", REGISTRY);

    // scaling is not a rollout
    String scaled =
        SPEC.replace("instruction: two", "instruction: 2").replace("replicas: 1", "replicas: 3");
    Fixtures.replaceSpec(d, scaled);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> agentDeployment(d, "c").getSpec().getReplicas() == 3);
    assertThat(hashes(d)).isEqualTo(hashes);
  }

  private static Map<String, String> awaitOnlyChanged(
      PallasDeployment d, Map<String, String> before, String... rolled) {
    List<String> changed = List.of(rolled);
    Map<String, String> after =
        await()
            .atMost(Duration.ofSeconds(30))
            .until(
                () -> hashes(d),
                now -> changed.stream().noneMatch(p -> now.get(p).equals(before.get(p))));
    for (String other : before.keySet()) {
      if (!changed.contains(other)) {
        assertThat(after.get(other)).as("%s must not roll", other).isEqualTo(before.get(other));
      }
    }
    return after;
  }

  /** Each agent's pod template hash, and the registry's. */
  private static Map<String, String> hashes(PallasDeployment d) {
    Map<String, String> hashes =
        new HashMap<>(
            AGENTS.stream()
                .collect(Collectors.toMap(Function.identity(), agent -> configHash(d, agent))));
    hashes.put(REGISTRY, Fixtures.registryHash(d));
    return hashes;
  }
}
