package ca.helu.pallas.bench;

import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasDeploymentSpec;
import ca.helu.pallas.api.PallasNames;
import io.fabric8.kubeapitest.KubeAPIServer;
import io.fabric8.kubeapitest.KubeAPIServerConfigBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentConditionBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentStatusBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

/**
 * The operator measured on a real kube-apiserver + etcd (kube-api-test), the packaged operator
 * running as its own JVM with {@code -Xmx256m}: start to ready, one 10-agent PallasDeployment from
 * apply to every object created, 50 PallasDeployments of 10 agents to Ready (this tool playing the
 * Deployment controller, as there is no kubelet), the operator's RSS, and writes at steady state.
 * Writes the "Operator" section of docs/benchmarks.md.
 */
public final class OperatorBenchmark {
  private static final String BEGIN =
      "<!-- operator benchmark: written by benchmarks/operator.sh -->";
  private static final String END = "<!-- end of operator benchmark -->";
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private OperatorBenchmark() {}

  public static void main(String[] args) throws Exception {
    Path out = Path.of("docs/benchmarks.md");
    Path jar = Path.of("operator/target/pallas-operator.jar");
    int fleets = 50;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--out" -> out = Path.of(args[++i]);
        case "--fleets" -> fleets = Integer.parseInt(args[++i]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    KubeAPIServer api =
        new KubeAPIServer(
            KubeAPIServerConfigBuilder.anAPIServerConfig()
                .withOfflineMode(true)
                .withApiServerVersion("1.35.4")
                .build());
    api.start();
    Path work = Files.createTempDirectory("pallas-operator-bench");
    Path kubeconfig = work.resolve("kubeconfig");
    Files.writeString(kubeconfig, api.getKubeConfigYaml());
    List<String> rows = new ArrayList<>();
    try (KubernetesClient k8s =
        new KubernetesClientBuilder()
            .withConfig(Config.fromKubeconfig(api.getKubeConfigYaml()))
            .build()) {
      try (InputStream crd =
          Files.newInputStream(Path.of("crds/pallasdeployments.pallas.helu.ca-v1.yml"))) {
        k8s.resource(k8s.apiextensions().v1().customResourceDefinitions().load(crd).item())
            .create();
      }
      await(() -> established(k8s), Duration.ofSeconds(60));

      List<Long> starts = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        try (Operator op = Operator.start(jar, kubeconfig, work.resolve("start-" + i + ".log"))) {
          starts.add(op.startMillis);
        }
      }
      rows.add(
          row(
              "operator JVM start to /readyz (-Xmx256m, median of 3)",
              median(starts) + " ms",
              "—"));

      try (Operator op = Operator.start(jar, kubeconfig, work.resolve("operator.log"))) {
        FakeDeploymentController controller = new FakeDeploymentController(k8s);
        List<Long> applies = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
          String ns = namespace(k8s, "ten-" + i);
          long t0 = System.nanoTime();
          k8s.resource(fleet("ten", ns, 10)).create();
          await(() -> allObjects(k8s, ns, "ten", 10), Duration.ofSeconds(60));
          applies.add((System.nanoTime() - t0) / 1_000_000);
        }
        rows.add(
            row(
                "one 10-agent PallasDeployment: apply to all 26 objects created (median of 3)",
                median(applies) + " ms (" + applies + ")",
                "<= 2 s"));

        List<String> namespaces = new ArrayList<>();
        for (int i = 0; i < fleets; i++) {
          namespaces.add(namespace(k8s, "fleet-" + i));
        }
        long maxRss = 0;
        long t0 = System.nanoTime();
        for (String ns : namespaces) {
          k8s.resource(fleet("fleet", ns, 10)).create();
        }
        while (!namespaces.stream().allMatch(ns -> ready(k8s, ns, "fleet"))) {
          maxRss = Math.max(maxRss, op.rssMb());
          if (System.nanoTime() - t0 > TimeUnit.MINUTES.toNanos(10)) {
            throw new IllegalStateException("not converged after 10 minutes");
          }
          Thread.sleep(250);
        }
        long converged = (System.nanoTime() - t0) / 1_000_000;
        maxRss = Math.max(maxRss, op.rssMb());
        rows.add(
            row(
                fleets + " PallasDeployments x 10 agents: apply to all Ready=True",
                String.format("%.1f s; operator RSS max %d MB", converged / 1000.0, maxRss),
                "<= 60 s, RSS <= 320 MB"));

        Map<String, String> before = versions(k8s, namespaces);
        Thread.sleep(60_000); // the measurement window itself
        Map<String, String> after = versions(k8s, namespaces);
        long writes =
            after.entrySet().stream()
                    .filter(e -> !e.getValue().equals(before.get(e.getKey())))
                    .count()
                + before.keySet().stream().filter(k -> !after.containsKey(k)).count();
        rows.add(
            row(
                "steady state after convergence: objects written in 60 s ("
                    + before.size()
                    + " watched)",
                writes
                    + " writes/min; operator RSS "
                    + op.rssMb()
                    + " MB, live heap after a full GC "
                    + op.liveHeapMb()
                    + " MB",
                "0"));
        controller.close();
      }
    } finally {
      api.stop();
    }
    String section = section(rows);
    System.out.println(section);
    String doc = Files.exists(out) ? Files.readString(out) : "# Benchmarks\n";
    int b = doc.indexOf(BEGIN);
    int e = doc.indexOf(END);
    doc =
        b >= 0 && e > b
            ? doc.substring(0, b) + section + doc.substring(e + END.length())
            : doc + "\n" + section + "\n";
    Files.writeString(out, doc);
  }

  private static String section(List<String> rows) {
    StringBuilder s = new StringBuilder(BEGIN).append("\n\n## Operator\n\n");
    s.append(
        "Measured by `benchmarks/operator.sh` on "
            + java.time.LocalDate.now()
            + ": "
            + Runtime.getRuntime().availableProcessors()
            + " cores, Java "
            + Runtime.version().feature()
            + "; a real kube-apiserver v1.35.4 + etcd (kube-api-test) on the same machine; the"
            + " packaged operator in its own JVM with `-Xmx256m`; agents on the passthrough model."
            + " No kubelet runs: the benchmark writes each Deployment's status as the Deployment"
            + " controller would once its pods are ready.\n\n");
    s.append("| scenario | measured | target |\n|---|---|---|\n");
    rows.forEach(r -> s.append(r).append('\n'));
    return s.append('\n').append(END).toString();
  }

  private static String row(String scenario, String measured, String target) {
    return "| " + scenario + " | " + measured + " | " + target + " |";
  }

  private static long median(List<Long> values) {
    List<Long> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    return sorted.get(sorted.size() / 2);
  }

  static PallasDeployment fleet(String name, String ns, int agents) {
    List<AgentSpec> list = new ArrayList<>();
    for (int i = 0; i < agents; i++) {
      list.add(
          new AgentSpec(
              "agent-" + i,
              null,
              null,
              null,
              "You help.",
              null,
              null,
              null,
              null,
              null,
              null,
              null,
              null,
              null,
              null,
              null,
              null,
              null));
    }
    return new PallasDeployment(
        new ObjectMetaBuilder().withName(name).withNamespace(ns).build(),
        new PallasDeploymentSpec(
            null,
            null,
            null,
            "passthrough",
            null,
            null,
            null,
            list,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null));
  }

  private static String namespace(KubernetesClient k8s, String name) {
    k8s.resource(new NamespaceBuilder().withNewMetadata().withName(name).endMetadata().build())
        .create();
    return name;
  }

  private static boolean established(KubernetesClient k8s) {
    CustomResourceDefinition crd =
        k8s.apiextensions()
            .v1()
            .customResourceDefinitions()
            .withName("pallasdeployments.pallas.helu.ca")
            .get();
    return crd != null
        && crd.getStatus() != null
        && crd.getStatus().getConditions().stream()
            .anyMatch(c -> "Established".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  /** ConfigMap, registry Deployment/Service/ServiceAccount/Role/RoleBinding, per agent both. */
  private static boolean allObjects(KubernetesClient k8s, String ns, String name, int agents) {
    return k8s.apps().deployments().inNamespace(ns).list().getItems().size() == agents + 1
        && k8s.services().inNamespace(ns).list().getItems().size() == agents + 1
        && k8s.configMaps().inNamespace(ns).withName(PallasNames.configMap(name)).get() != null
        && k8s.rbac()
                .roleBindings()
                .inNamespace(ns)
                .withName(PallasNames.registryObject(name))
                .get()
            != null
        && k8s.rbac().roles().inNamespace(ns).withName(PallasNames.registryObject(name)).get()
            != null
        && k8s.serviceAccounts().inNamespace(ns).withName(PallasNames.registryObject(name)).get()
            != null;
  }

  private static boolean ready(KubernetesClient k8s, String ns, String name) {
    PallasDeployment d = k8s.resources(PallasDeployment.class).inNamespace(ns).withName(name).get();
    return d != null
        && d.getStatus() != null
        && d.getStatus().conditions() != null
        && d.getStatus().conditions().stream()
            .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  private static Map<String, String> versions(KubernetesClient k8s, List<String> namespaces) {
    Map<String, String> versions = new TreeMap<>();
    for (String ns : namespaces) {
      Stream.<List<? extends HasMetadata>>of(
              k8s.resources(PallasDeployment.class).inNamespace(ns).list().getItems(),
              k8s.configMaps()
                  .inNamespace(ns)
                  .withLabel(PallasNames.LABEL_MANAGED_BY)
                  .list()
                  .getItems(),
              k8s.services().inNamespace(ns).list().getItems(),
              k8s.apps().deployments().inNamespace(ns).list().getItems(),
              k8s.serviceAccounts()
                  .inNamespace(ns)
                  .withLabel(PallasNames.LABEL_MANAGED_BY)
                  .list()
                  .getItems(),
              k8s.rbac().roles().inNamespace(ns).list().getItems(),
              k8s.rbac().roleBindings().inNamespace(ns).list().getItems(),
              k8s.v1().events().inNamespace(ns).list().getItems())
          .flatMap(List::stream)
          .forEach(o ->
              versions.put(
                  ns + "/" + o.getKind() + "/" + o.getMetadata().getName(),
                  o.getMetadata().getResourceVersion()));
    }
    return versions;
  }

  private static void await(BooleanSupplier condition, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("timed out");
      }
      Thread.sleep(20);
    }
  }

  /** The packaged operator as a process. */
  private static final class Operator implements AutoCloseable {
    final Process process;
    final long startMillis;

    private Operator(Process process, long startMillis) {
      this.process = process;
      this.startMillis = startMillis;
    }

    static Operator start(Path jar, Path kubeconfig, Path log) throws Exception {
      int port;
      try (ServerSocket s = new ServerSocket(0)) {
        port = s.getLocalPort();
      }
      String java = ProcessHandle.current().info().command().orElse("java");
      ProcessBuilder pb =
          new ProcessBuilder(
                  Stream.concat(
                          Stream.of(java, "-Xmx256m"),
                          Stream.concat(
                              Stream.of(
                                      System.getenv()
                                          .getOrDefault("OPERATOR_JVM_OPTS", "")
                                          .split(" "))
                                  .filter(o -> !o.isBlank()),
                              Stream.of("-jar", jar.toAbsolutePath().toString())))
                      .toList())
              .redirectErrorStream(true)
              .redirectOutput(log.toFile());
      pb.environment().put("KUBECONFIG", kubeconfig.toString());
      pb.environment().put("PALLAS_HTTP_PORT", Integer.toString(port));
      long t0 = System.nanoTime();
      Process p = pb.start();
      URI ready = URI.create("http://127.0.0.1:" + port + "/readyz");
      while (true) {
        if (!p.isAlive()) {
          throw new IllegalStateException("operator exited: " + Files.readString(log));
        }
        try {
          if (HTTP.send(
                      HttpRequest.newBuilder(ready).build(), HttpResponse.BodyHandlers.discarding())
                  .statusCode()
              == 200) {
            break;
          }
        } catch (IOException e) {
          // not listening yet
        }
        Thread.sleep(10);
      }
      return new Operator(p, (System.nanoTime() - t0) / 1_000_000);
    }

    /** Heap in use after a full GC (jcmd next to this JVM's java). */
    long liveHeapMb() throws IOException, InterruptedException {
      String jcmd =
          Path.of(ProcessHandle.current().info().command().orElseThrow())
              .resolveSibling("jcmd")
              .toString();
      new ProcessBuilder(jcmd, Long.toString(process.pid()), "GC.run").start().waitFor();
      Process info =
          new ProcessBuilder(jcmd, Long.toString(process.pid()), "GC.heap_info")
              .redirectErrorStream(true)
              .start();
      String text = new String(info.getInputStream().readAllBytes());
      info.waitFor();
      java.util.regex.Matcher m = java.util.regex.Pattern.compile("used (\\d+)K").matcher(text);
      return m.find() ? Long.parseLong(m.group(1)) / 1024 : -1;
    }

    long rssMb() {
      try {
        for (String line : Files.readAllLines(Path.of("/proc/" + process.pid() + "/status"))) {
          if (line.startsWith("VmRSS:")) {
            return Long.parseLong(line.replaceAll("\\D", "")) / 1024;
          }
        }
      } catch (IOException e) {
        return -1;
      }
      return -1;
    }

    @Override
    public void close() throws InterruptedException {
      process.destroy();
      process.waitFor(30, TimeUnit.SECONDS);
    }
  }

  /** Writes each new Deployment's status as the Deployment controller would once pods are ready. */
  private static final class FakeDeploymentController implements AutoCloseable {
    private final AutoCloseable informer;

    FakeDeploymentController(KubernetesClient k8s) {
      informer =
          k8s.apps()
              .deployments()
              .inAnyNamespace()
              .inform(
                  new ResourceEventHandler<>() {
                    @Override
                    public void onAdd(Deployment d) {
                      available(k8s, d);
                    }

                    @Override
                    public void onUpdate(Deployment before, Deployment after) {
                      if (!after
                          .getMetadata()
                          .getGeneration()
                          .equals(
                              after.getStatus() == null
                                  ? null
                                  : after.getStatus().getObservedGeneration())) {
                        available(k8s, after);
                      }
                    }

                    @Override
                    public void onDelete(Deployment d, boolean unknown) {}
                  });
    }

    private static void available(KubernetesClient k8s, Deployment d) {
      int replicas = d.getSpec().getReplicas() == null ? 1 : d.getSpec().getReplicas();
      d.setStatus(
          new DeploymentStatusBuilder()
              .withObservedGeneration(d.getMetadata().getGeneration())
              .withReplicas(replicas)
              .withUpdatedReplicas(replicas)
              .withReadyReplicas(replicas)
              .withAvailableReplicas(replicas)
              .withConditions(
                  new DeploymentConditionBuilder()
                      .withType("Available")
                      .withStatus("True")
                      .withReason("MinimumReplicasAvailable")
                      .build())
              .build());
      try {
        k8s.resource(d).updateStatus();
      } catch (KubernetesClientException e) {
        // a newer version arrives as another event
      }
    }

    @Override
    public void close() throws Exception {
      informer.close();
    }
  }
}
