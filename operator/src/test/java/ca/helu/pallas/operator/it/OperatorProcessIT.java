package ca.helu.pallas.operator.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.testing.Fixtures;
import ca.helu.pallas.operator.testing.KubeCluster;
import ca.helu.pallas.operator.testing.LocalPod;
import ca.helu.pallas.operator.testing.TestOperator;
import ca.helu.pallas.runtime.testing.HttpStatus;
import ca.helu.pallas.runtime.testing.ImageTool;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The packaged operator as it runs in its pod: {@code java -jar pallas-operator.jar}, and the
 * operator image's entrypoint run as a container runtime runs it (images/image.py), as a UID the
 * image does not know in group 0 (as OpenShift's restricted-v2 SCC runs it; the chart fixes no
 * user), configured by its environment, holding a leader Lease, reconciling only its namespace,
 * JSON logs carrying the resource in MDC, JOSDK metrics on /metrics, probes, and a clean stop on
 * SIGTERM that gives the Lease up.
 */
class OperatorProcessIT {
  private static final String ARBITRARY_UID = ImageTool.ARBITRARY_UID;

  private static final KubernetesClient K8S = KubeCluster.shared().client();
  private static final Path JAR = Path.of("target", "pallas-operator.jar");
  private static final Path IMAGE = Path.of("target", "pallas-operator-image.tar").toAbsolutePath();
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  /** Any UID, in group 0, reads every file of the image and writes its HOME, /tmp. */
  @Test
  void anArbitraryUserReadsTheWholeImage() throws Exception {
    assertThat(ImageTool.unreadable(IMAGE, ARBITRARY_UID)).isEmpty();
  }

  /** The jar as {@code java -jar} runs it, or the operator image's own entrypoint. */
  @ParameterizedTest
  @ValueSource(strings = {"jar", "image"})
  void thePackagedOperatorRunsLikeItsPod(String packaging, @TempDir Path dir) throws Exception {
    String ns = KubeCluster.shared().namespace("process");
    Path kubeconfig = dir.resolve("kubeconfig");
    Files.writeString(kubeconfig, KubeCluster.shared().selfContainedKubeconfig());
    int port = LocalPod.freePorts(1)[0];
    Path log = dir.resolve("operator.log");
    Map<String, String> env = new TreeMap<>();
    env.put("PALLAS_WATCH_NAMESPACES", ns);
    env.put("PALLAS_RESOURCE_SELECTOR", TestOperator.OTHER_OPERATOR + "=process");
    env.put("PALLAS_LEADER_ELECTION", "true");
    env.put("POD_NAMESPACE", ns);
    env.put("PALLAS_HTTP_PORT", Integer.toString(port));
    env.put("PALLAS_RUNTIME_IMAGE", "example.org/pallas-agent-runtime:9");
    List<String> command = new ArrayList<>();
    if (packaging.equals("jar")) {
      command.add(ProcessHandle.current().info().command().orElse("java"));
      command.addAll(List.of("-Xmx256m", "-jar", JAR.toAbsolutePath().toString()));
      env.put("KUBECONFIG", kubeconfig.toString());
    } else {
      command.addAll(List.of("python3", LocalPod.IMAGE_TOOL.toString(), "run", IMAGE.toString()));
      command.addAll(List.of("--user", ARBITRARY_UID));
      command.addAll(List.of("--file", kubeconfig + ":/tmp/kubeconfig"));
      env.put("KUBECONFIG", "/tmp/kubeconfig");
      env.forEach((k, v) -> command.addAll(List.of("--env", k + "=" + v)));
    }
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.redirectOutput(log.toFile());
    builder.environment().putAll(env);
    Process operator = builder.start();
    try {
      await()
          .atMost(Duration.ofSeconds(60))
          .failFast("the operator exited", () -> !operator.isAlive())
          .until(() -> HttpStatus.of("http://127.0.0.1:" + port + "/readyz") == 200);
      assertThat(HttpStatus.of("http://127.0.0.1:" + port + "/livez")).isEqualTo(200);
      if (packaging.equals("image")) {
        assertThat(LocalPod.javaStatus(operator))
            .anySatisfy(line -> assertThat(line).matches("Uid:(\\s+" + ARBITRARY_UID + "){4}"))
            .anySatisfy(line -> assertThat(line).matches("Gid:(\\s+0){4}"));
      }
      Lease lease =
          await()
              .atMost(Duration.ofSeconds(30))
              .until(
                  () -> K8S.leases().inNamespace(ns).withName("pallas-operator").get(),
                  l -> l != null && l.getSpec().getHolderIdentity() != null);
      assertThat(lease.getSpec().getHolderIdentity()).isNotBlank();

      PallasDeployment d =
          Fixtures.parse("proc", ns, "  defaultModel: passthrough\n  agents: [{name: a}]\n");
      d.getMetadata().getLabels().put(TestOperator.OTHER_OPERATOR, "process");
      K8S.resource(d).create();
      var configMap =
          await()
              .atMost(Duration.ofSeconds(60))
              .until(
                  () ->
                      K8S.configMaps()
                          .inNamespace(ns)
                          .withName(PallasNames.configMap("proc"))
                          .get(),
                  c -> c != null);
      assertThat(configMap.getData()).containsKey(PallasNames.CONFIG_KEY);
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> Fixtures.agentDeployment(d, "a"), x -> x != null);
      assertThat(
              Fixtures.agentDeployment(d, "a")
                  .getSpec()
                  .getTemplate()
                  .getSpec()
                  .getContainers()
                  .get(0)
                  .getImage())
          .isEqualTo("example.org/pallas-agent-runtime:9");

      String metrics =
          HTTP.send(
                  HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                      .build(),
                  HttpResponse.BodyHandlers.ofString())
              .body();
      assertThat(metrics)
          .contains("operator_sdk_reconciliations_started_total", "jvm_memory_used_bytes");

      ObjectMapper json = new ObjectMapper();
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(() -> {
            List<JsonNode> lines = new ArrayList<>();
            for (String line : Files.readAllLines(log)) {
              if (line.startsWith("{")) {
                lines.add(json.readTree(line));
              }
            }
            assertThat(lines)
                .anySatisfy(l -> {
                  assertThat(l.path("resource.name").asText()).isEqualTo("proc");
                  assertThat(l.path("resource.namespace").asText()).isEqualTo(ns);
                  assertThat(l.path("message").asText()).startsWith("status: Ready=");
                });
          });
    } finally {
      operator.destroy(); // SIGTERM
      assertThat(operator.waitFor(30, TimeUnit.SECONDS)).as("stops on SIGTERM").isTrue();
    }
    assertThat(Files.readString(log)).contains("\"message\":\"stopping\"");
    assertThat(Files.readAllLines(log))
        .filteredOn(line -> !line.isBlank())
        .allSatisfy(line -> assertThat(line).startsWith("{"));
  }

  /**
   * A leader that stops gives its Lease up (docs/operator.md, "Configuration"), so a standby takes
   * over at once rather than when the Lease expires, and an operator removed for good (helm
   * uninstall) leaves a Lease that names no one. Issue 17 §8: JOSDK never released it, and the
   * Lease named the deleted pod.
   */
  @Test
  void aStoppingLeaderGivesItsLeaseUpAndAStandbyTakesOverAtOnce(@TempDir Path dir)
      throws Exception {
    String ns = KubeCluster.shared().namespace("lease");
    Path kubeconfig = dir.resolve("kubeconfig");
    Files.writeString(kubeconfig, KubeCluster.shared().selfContainedKubeconfig());
    int[] ports = LocalPod.freePorts(2);
    Process first = jar(dir, kubeconfig, ns, "operator-a", ports[0]);
    Process second = null;
    try {
      await()
          .atMost(Duration.ofSeconds(60))
          .failFast("the first operator exited", () -> !first.isAlive())
          .until(() -> "operator-a".equals(holder(ns)));
      Process standby = jar(dir, kubeconfig, ns, "operator-b", ports[1]);
      second = standby;
      await()
          .atMost(Duration.ofSeconds(60))
          .failFast("the second operator exited", () -> !standby.isAlive())
          .until(() -> HttpStatus.of("http://127.0.0.1:" + ports[1] + "/readyz") == 200);
      assertThat(holder(ns))
          .as("the first holds the Lease, the second stands by")
          .isEqualTo("operator-a");

      first.destroy(); // SIGTERM
      assertThat(first.waitFor(30, TimeUnit.SECONDS)).as("stops on SIGTERM").isTrue();
      long stopped = System.nanoTime();
      assertThat(holder(ns))
          .as("a stopped operator's name is gone from the Lease")
          .isNotEqualTo("operator-a");
      await()
          .atMost(Duration.ofSeconds(30))
          .failFast("the second operator exited", () -> !standby.isAlive())
          .until(() -> "operator-b".equals(holder(ns)));
      Duration takeover = Duration.ofNanos(System.nanoTime() - stopped);
      // the standby retries every 2 to 4.4 s (JOSDK's retry period with fabric8's jitter); a Lease
      // not given up would hold it off for its whole duration, 15 s after the last renewal
      assertThat(takeover).as("took over after %s", takeover).isLessThan(Duration.ofSeconds(10));
      assertThat(Files.readString(dir.resolve("operator-a.log")))
          .contains("gave up the leader Lease pallas-operator");

      standby.destroy(); // the last operator goes, as on helm uninstall
      assertThat(standby.waitFor(30, TimeUnit.SECONDS)).as("stops on SIGTERM").isTrue();
      Lease lease = K8S.leases().inNamespace(ns).withName("pallas-operator").get();
      assertThat(lease.getSpec().getHolderIdentity()).as("held by no one").isNull();
    } finally {
      first.destroyForcibly();
      if (second != null) {
        second.destroyForcibly();
      }
    }
  }

  private static String holder(String ns) {
    Lease lease = K8S.leases().inNamespace(ns).withName("pallas-operator").get();
    return lease == null ? null : lease.getSpec().getHolderIdentity();
  }

  /** {@code java -jar pallas-operator.jar} with leader election, as pod {@code hostname}. */
  private static Process jar(Path dir, Path kubeconfig, String ns, String hostname, int port)
      throws Exception {
    ProcessBuilder builder =
        new ProcessBuilder(
                ProcessHandle.current().info().command().orElse("java"),
                "-Xmx256m",
                "-jar",
                JAR.toAbsolutePath().toString())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve(hostname + ".log").toFile());
    builder
        .environment()
        .putAll(
            Map.of(
                "KUBECONFIG",
                kubeconfig.toString(),
                "HOSTNAME",
                hostname,
                "POD_NAMESPACE",
                ns,
                "PALLAS_WATCH_NAMESPACES",
                ns,
                "PALLAS_RESOURCE_SELECTOR",
                TestOperator.OTHER_OPERATOR + "=lease",
                "PALLAS_LEADER_ELECTION",
                "true",
                "PALLAS_HTTP_PORT",
                Integer.toString(port)));
    return builder.start();
  }
}
