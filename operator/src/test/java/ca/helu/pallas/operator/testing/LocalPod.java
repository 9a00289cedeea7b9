package ca.helu.pallas.operator.testing;

import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.runtime.testing.ImageTool;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A rendered pod run as a local process: of the runtime jar (the container's args and env, Secret
 * keys read from their Secrets, its ConfigMap as files under a directory and the pod's paths
 * remapped there, Service names resolved through a hosts file given to the JVM), or of the runtime
 * image with everything else as rendered ({@link #startImage}). Pods share this host's ports, so an
 * agent's probe port moves to a free one ({@link #probePort}).
 */
public final class LocalPod implements AutoCloseable {
  public static final Path RUNTIME_JAR =
      Path.of("..", "agent-runtime", "target", "pallas-agent-runtime.jar");

  /** Runs an image's entrypoint as a container runtime would (docs/images.md). */
  public static final Path IMAGE_TOOL = ImageTool.SCRIPT;

  public static final Path RUNTIME_IMAGE =
      Path.of("..", "agent-runtime", "target", "pallas-agent-runtime-image.tar").toAbsolutePath();

  private static final String PROBE_PORT_OPTION = "--probe-port";

  private final Process process;
  private final Path log;
  private final int probePort;

  private LocalPod(Process process, Path log, int probePort) {
    this.process = process;
    this.log = log;
    this.probePort = probePort;
  }

  /** Where the pod answers the kubelet's probes here (-1: on its serving port only). */
  public int probePort() {
    return probePort;
  }

  public static LocalPod start(
      KubernetesClient k8s, Deployment deployment, Path root, Path hosts, Path kubeconfig)
      throws IOException {
    String ns = deployment.getMetadata().getNamespace();
    Container c = deployment.getSpec().getTemplate().getSpec().getContainers().get(0);
    Files.createDirectories(root);
    // the ConfigMap volume, when mounted, becomes files under root + its mount path
    Path configDir = root.resolve(PallasNames.CONFIG_DIR.substring(1));
    Files.createDirectories(configDir);
    configMap(k8s, deployment).forEach((k, v) -> write(configDir.resolve(k), v));
    List<String> command = new ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElse("java"));
    command.add("-jar");
    command.add(RUNTIME_JAR.toAbsolutePath().toString());
    int probePort = probePortHere(c);
    for (String arg : withProbePort(c.getArgs(), probePort)) {
      command.add(
          arg.startsWith(PallasNames.CONFIG_DIR) ? root.resolve(arg.substring(1)).toString() : arg);
    }
    ProcessBuilder builder = new ProcessBuilder(command).directory(root.toFile());
    Map<String, String> env = builder.environment();
    env.keySet().removeIf(k -> k.startsWith("PALLAS_") || k.equals("KUBECONFIG"));
    env.putAll(environment(k8s, ns, c));
    env.put("JAVA_TOOL_OPTIONS", "-Xmx128m -Djdk.net.hosts.file=" + hosts.toAbsolutePath());
    if (kubeconfig != null) {
      env.put("KUBECONFIG", kubeconfig.toString());
    }
    Path log = root.resolve("out.log");
    builder.redirectErrorStream(true).redirectOutput(log.toFile());
    return new LocalPod(builder.start(), log, probePort);
  }

  /** A free port for the probe port the container's args give, or -1 when they give none. */
  private static int probePortHere(Container c) throws IOException {
    return c.getArgs().contains(PROBE_PORT_OPTION) ? freePorts(1)[0] : -1;
  }

  private static List<String> withProbePort(List<String> args, int port) {
    List<String> moved = new ArrayList<>(args);
    int at = moved.indexOf(PROBE_PORT_OPTION);
    if (at >= 0) {
      moved.set(at + 1, Integer.toString(port));
    }
    return moved;
  }

  /**
   * The rendered pod run from the runtime image as a kubelet runs it (images/image.py): the image's
   * entrypoint with the container's args verbatim, its env, as the pod's runAsUser (and runAsGroup)
   * where it sets one, the ConfigMap mounted at its path, {@code hosts} as /etc/hosts and, when the
   * pod mounts a ServiceAccount token, that token at the standard path with
   * KUBERNETES_SERVICE_HOST/PORT pointing at the API server.
   */
  public static LocalPod startImage(
      KubernetesClient k8s, Deployment deployment, Path image, Path root, Path hosts)
      throws IOException {
    String ns = deployment.getMetadata().getNamespace();
    var pod = deployment.getSpec().getTemplate().getSpec();
    Container c = pod.getContainers().get(0);
    Files.createDirectories(root);
    List<String> command =
        new ArrayList<>(List.of("python3", IMAGE_TOOL.toString(), "run", image.toString()));
    for (var entry : configMap(k8s, deployment).entrySet()) {
      Path file = root.resolve(entry.getKey());
      write(file, entry.getValue());
      command.addAll(List.of("--file", file + ":" + PallasNames.CONFIG_DIR + "/" + entry.getKey()));
    }
    command.addAll(List.of("--file", hosts.toAbsolutePath() + ":/etc/hosts"));
    var security = pod.getSecurityContext();
    if (security != null && security.getRunAsUser() != null) {
      command.addAll(
          List.of(
              "--user",
              security.getRunAsUser()
                  + (security.getRunAsGroup() == null ? "" : ":" + security.getRunAsGroup())));
    }
    Map<String, String> env = new java.util.TreeMap<>(environment(k8s, ns, c));
    if (!Boolean.FALSE.equals(pod.getAutomountServiceAccountToken())) {
      String account = pod.getServiceAccountName();
      Config admin = k8s.getConfiguration();
      Path token = root.resolve("token");
      write(token, token(k8s, ns, account));
      Path ca = root.resolve("ca.crt");
      Files.write(ca, Base64.getDecoder().decode(caData(admin)));
      String dir = "/var/run/secrets/kubernetes.io/serviceaccount/";
      command.addAll(List.of("--file", token + ":" + dir + "token"));
      command.addAll(List.of("--file", ca + ":" + dir + "ca.crt"));
      URI api = URI.create(admin.getMasterUrl());
      env.put("KUBERNETES_SERVICE_HOST", api.getHost());
      env.put("KUBERNETES_SERVICE_PORT", Integer.toString(api.getPort()));
    }
    env.forEach((k, v) -> command.addAll(List.of("--env", k + "=" + v)));
    command.add("--");
    int probePort = probePortHere(c);
    command.addAll(withProbePort(c.getArgs(), probePort));
    Path log = root.resolve("out.log");
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
    return new LocalPod(builder.start(), log, probePort);
  }

  private static Map<String, String> configMap(KubernetesClient k8s, Deployment deployment) {
    return k8s.configMaps()
        .inNamespace(deployment.getMetadata().getNamespace())
        .withName(
            PallasNames.configMap(
                deployment.getMetadata().getLabels().get(PallasNames.LABEL_INSTANCE)))
        .get()
        .getData();
  }

  private static Map<String, String> environment(KubernetesClient k8s, String ns, Container c) {
    Map<String, String> env = new java.util.LinkedHashMap<>();
    for (EnvVar var : c.getEnv()) {
      env.put(var.getName(), valueOf(k8s, ns, var));
    }
    return env;
  }

  private static String valueOf(KubernetesClient k8s, String ns, EnvVar var) {
    if (var.getValueFrom() == null) {
      return var.getValue();
    }
    var ref = var.getValueFrom().getSecretKeyRef();
    Secret secret = k8s.secrets().inNamespace(ns).withName(ref.getName()).get();
    return new String(
        Base64.getDecoder().decode(secret.getData().get(ref.getKey())), StandardCharsets.UTF_8);
  }

  /** A kubeconfig holding a fresh token of ServiceAccount {@code name}, as its pod would have. */
  public static Path serviceAccountKubeconfig(KubernetesClient k8s, String ns, String name)
      throws IOException {
    Config admin = k8s.getConfiguration();
    Path file = Files.createTempFile("kubeconfig-" + name, ".yaml");
    Files.writeString(
        file,
        """
        apiVersion: v1
        kind: Config
        clusters: [{name: test, cluster: {server: "%s", certificate-authority-data: %s}}]
        users: [{name: %s, user: {token: %s}}]
        contexts: [{name: test, context: {cluster: test, user: %s, namespace: %s}}]
        current-context: test
        """
            .formatted(admin.getMasterUrl(), caData(admin), name, token(k8s, ns, name), name, ns));
    return file;
  }

  private static String token(KubernetesClient k8s, String ns, String account) {
    return k8s.serviceAccounts()
        .inNamespace(ns)
        .withName(account)
        .tokenRequest(
            new TokenRequestBuilder().withNewSpec().withExpirationSeconds(3600L).endSpec().build())
        .getStatus()
        .getToken();
  }

  /** The API server's CA certificate, base64. */
  private static String caData(Config admin) throws IOException {
    return admin.getCaCertData() != null
        ? admin.getCaCertData()
        : Base64.getEncoder().encodeToString(Files.readAllBytes(Path.of(admin.getCaCertFile())));
  }

  public static int[] freePorts(int n) throws IOException {
    int[] ports = new int[n];
    List<ServerSocket> open = new ArrayList<>();
    try {
      for (int i = 0; i < n; i++) {
        ServerSocket s = new ServerSocket(0);
        open.add(s);
        ports[i] = s.getLocalPort();
      }
    } finally {
      for (ServerSocket s : open) {
        s.close();
      }
    }
    return ports;
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /** /proc/PID/status of the pod's JVM (its user and groups), once it runs. */
  public List<String> javaStatus() throws IOException {
    return javaStatus(process);
  }

  /** /proc/PID/status of the JVM a process (images/image.py run) started. */
  public static List<String> javaStatus(Process process) throws IOException {
    ProcessHandle java =
        process
            .descendants()
            .filter(p -> p.info().command().map(c -> c.endsWith("/java")).orElse(false))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no java process under " + process.pid()));
    return Files.readAllLines(Path.of("/proc", Long.toString(java.pid()), "status"));
  }

  public String log() {
    try {
      return Files.readString(log);
    } catch (IOException e) {
      return "";
    }
  }

  private static void write(Path file, String text) {
    try {
      Files.writeString(file, text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
  }
}
