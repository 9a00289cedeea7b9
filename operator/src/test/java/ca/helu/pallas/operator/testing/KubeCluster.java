package ca.helu.pallas.operator.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubeapitest.KubeAPIServer;
import io.fabric8.kubeapitest.KubeAPIServerConfigBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentConditionBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentStatusBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One real kube-apiserver and etcd (fabric8 kube-api-test) for every integration test in this JVM,
 * with the PallasDeployment CRD from {@code crds/} installed. The binaries come from {@code
 * tools/go-binaries.sh}, which {@code .ci/run} calls; nothing is downloaded. There is no
 * controller-manager or kubelet: Deployments get no status unless a test writes one.
 */
public final class KubeCluster {
  public static final String VERSION = "1.35.4";
  public static final Path CRD = Path.of("..", "crds", "pallasdeployments.pallas.helu.ca-v1.yml");

  private static KubeCluster shared;
  private static final AtomicInteger NAMESPACES = new AtomicInteger();

  private final KubeAPIServer server;
  private final KubernetesClient client;

  private KubeCluster() {
    this(true);
  }

  private KubeCluster(boolean installCrd) {
    Path binaries = binaries();
    if (System.getenv("KUBE_API_TEST_DIR") == null
        && !Files.isExecutable(binaries.resolve("kube-apiserver"))) {
      throw new IllegalStateException(
          "no kube-apiserver in " + binaries + ": run tools/go-binaries.sh (.ci/run does)");
    }
    server =
        new KubeAPIServer(
            KubeAPIServerConfigBuilder.anAPIServerConfig()
                .withOfflineMode(true)
                .withApiServerVersion(VERSION)
                .withStartupTimeout(120_000)
                .build());
    server.start();
    client =
        new KubernetesClientBuilder()
            .withConfig(Config.fromKubeconfig(server.getKubeConfigYaml()))
            .build();
    if (!installCrd) {
      return;
    }
    try {
      CustomResourceDefinition crd =
          client
              .apiextensions()
              .v1()
              .customResourceDefinitions()
              .load(Files.newInputStream(CRD))
              .item();
      client.resource(crd).serverSideApply();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    client
        .apiextensions()
        .v1()
        .customResourceDefinitions()
        .withName("pallasdeployments.pallas.helu.ca")
        .waitUntilCondition(
            c ->
                c.getStatus() != null
                    && c.getStatus().getConditions() != null
                    && c.getStatus().getConditions().stream()
                        .anyMatch(
                            x -> "Established".equals(x.getType()) && "True".equals(x.getStatus())),
            60,
            java.util.concurrent.TimeUnit.SECONDS);
  }

  /** A cluster of its own, for a test that must see nothing else (stop it with {@link #stop}). */
  public static KubeCluster dedicated() {
    return new KubeCluster(true);
  }

  /** A cluster of its own without the PallasDeployment CRD (a test installs it, as users do). */
  public static KubeCluster withoutCrd() {
    return new KubeCluster(false);
  }

  public static synchronized KubeCluster shared() {
    if (shared == null) {
      shared = new KubeCluster();
      Runtime.getRuntime().addShutdownHook(new Thread(shared::stop, "kube-api-test-stop"));
    }
    return shared;
  }

  public KubernetesClient client() {
    return client;
  }

  public String kubeconfig() {
    return server.getKubeConfigYaml();
  }

  /**
   * A kubeconfig holding its certificates inline, readable where the files it would otherwise point
   * at are not (inside an image's root filesystem).
   */
  public String selfContainedKubeconfig() throws IOException {
    Config c = client.getConfiguration();
    return """
    apiVersion: v1
    kind: Config
    clusters: [{name: test, cluster: {server: "%s", certificate-authority-data: %s}}]
    users: [{name: test, user: {client-certificate-data: %s, client-key-data: %s}}]
    contexts: [{name: test, context: {cluster: test, user: test}}]
    current-context: test
    """
        .formatted(
            c.getMasterUrl(),
            inline(c.getCaCertData(), c.getCaCertFile()),
            inline(c.getClientCertData(), c.getClientCertFile()),
            inline(c.getClientKeyData(), c.getClientKeyFile()));
  }

  private static String inline(String data, String file) throws IOException {
    return data != null
        ? data
        : java.util.Base64.getEncoder().encodeToString(Files.readAllBytes(Path.of(file)));
  }

  /** Runs the real kubectl against this API server and returns what it printed. */
  public String kubectl(String... args) throws IOException, InterruptedException {
    Path config = Files.createTempFile("kubeconfig", ".yaml");
    Files.writeString(config, kubeconfig());
    List<String> command = new ArrayList<>();
    command.add(binaries().resolve("kubectl").toString());
    command.add("--kubeconfig=" + config);
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out =
        new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    p.waitFor();
    Files.delete(config);
    return out;
  }

  private static Path binaries() {
    return Path.of(
        System.getProperty("user.home"), ".kubeapitest", "k8s", VERSION + "-linux-amd64");
  }

  /** A fresh namespace for one test. */
  public String namespace(String prefix, Map<String, String> labels) {
    String name = prefix + "-" + NAMESPACES.incrementAndGet();
    client
        .resource(
            new NamespaceBuilder()
                .withNewMetadata()
                .withName(name)
                .withLabels(labels)
                .endMetadata()
                .build())
        .create();
    return name;
  }

  public String namespace(String prefix) {
    return namespace(prefix, Map.of());
  }

  /** Waits for the operator to create Deployment {@code name} in {@code ns}. */
  public Deployment awaitDeployment(String ns, String name) {
    return org.awaitility.Awaitility.await()
        .atMost(java.time.Duration.ofSeconds(60))
        .until(
            () -> client.apps().deployments().inNamespace(ns).withName(name).get(), d -> d != null);
  }

  /** The Prometheus Operator's ServiceMonitor CRD, from its module (tools/go-binaries.sh). */
  public static final Path SERVICE_MONITOR_CRD =
      Path.of(
          System.getenv()
              .getOrDefault("PALLAS_CACHE", System.getProperty("user.home") + "/.cache/pallas"),
          "prometheus-operator",
          "v0.85.0",
          "crds",
          "monitoring.coreos.com_servicemonitors.yaml");

  /** Writes the status a Deployment controller would once every pod is ready. */
  public void markAvailable(Deployment d) {
    int replicas = d.getSpec().getReplicas() == null ? 1 : d.getSpec().getReplicas();
    Deployment current = client.resource(d).get();
    assertThat(current).as("Deployment %s", d.getMetadata().getName()).isNotNull();
    current.setStatus(
        new DeploymentStatusBuilder()
            .withObservedGeneration(current.getMetadata().getGeneration())
            .withReplicas(replicas)
            .withUpdatedReplicas(replicas)
            .withReadyReplicas(replicas)
            .withAvailableReplicas(replicas)
            .withConditions(
                new DeploymentConditionBuilder()
                    .withType("Available")
                    .withStatus("True")
                    .withReason("MinimumReplicasAvailable")
                    .withMessage("Deployment has minimum availability.")
                    .build())
            .build());
    client.resource(current).updateStatus();
  }

  public void stop() {
    client.close();
    server.stop();
  }
}
