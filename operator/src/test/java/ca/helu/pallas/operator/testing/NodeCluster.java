package ca.helu.pallas.operator.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

/**
 * The real single-node cluster of e2e/cluster/cluster.sh (a kubelet on containerd, kube-proxy,
 * CoreDNS and the control plane, e2e/cluster/README.md) with the two images this build made
 * imported into it. Commands run as a user types them: through bash, from the repository's root,
 * with the cluster's kubeconfig and the helm and kubectl that tools/go-binaries.sh built first on
 * the PATH.
 */
public final class NodeCluster {
  /** The node's address on the cluster's bridge, where pods reach the host (e2e/cluster). */
  public static final String NODE_IP = "198.19.0.1";

  public static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  public static final Path SCRIPT = ROOT.resolve("e2e/cluster/cluster.sh");
  public static final List<Path> IMAGES =
      List.of(
          ROOT.resolve("agent-runtime/target/pallas-agent-runtime-image.tar"),
          ROOT.resolve("operator/target/pallas-operator-image.tar"));

  /**
   * The node takes fixed addresses, a fixed bridge and the host's netfilter tables (e2e/cluster),
   * so one runs on a machine at a time: a build that wants one while another build's node runs (two
   * worktrees, say) waits for this file's lock, which {@link #prepare} takes and {@link #down}
   * gives back (and the JVM's exit, however it ends).
   */
  private static final Path MACHINE_LOCK = Path.of("/tmp/pallas-node.lock");

  private static FileChannel machine;

  private final Path dir;

  private NodeCluster(Path dir) {
    this.dir = dir;
  }

  /** What a command printed (stdout and stderr) and its exit code. */
  public record Result(int exitCode, String output) {
    public String ok() {
      assertThat(exitCode).as(output).isZero();
      return output;
    }
  }

  /**
   * Starts the cluster (after {@link #prepare}), or aborts the calling test (skipped, with what is
   * missing) on a machine where it cannot run.
   */
  public static NodeCluster up(Path dir) throws Exception {
    return up(dir, false);
  }

  /**
   * {@link #up(Path)}, with NetworkPolicies enforced (kube-router's firewall, {@code cluster.sh up
   * --network-policy}) when asked.
   */
  public static NodeCluster up(Path dir, boolean enforceNetworkPolicies) throws Exception {
    prepare(dir);
    for (Path image : IMAGES) {
      assertThat(image).as("built by the module's package phase").exists();
    }
    List<String> args = new ArrayList<>(List.of("up"));
    if (enforceNetworkPolicies) {
      args.add("--network-policy");
    }
    IMAGES.forEach(i -> args.add(i.toString()));
    Result up = script(dir, Duration.ofMinutes(10), args.toArray(String[]::new));
    if (up.exitCode() != 0) {
      // stop what did start and restore the host before failing
      Result down = script(dir, Duration.ofMinutes(3), "down");
      throw new AssertionError(
          "cluster.sh up failed:\n" + up.output() + "\ncluster.sh down:\n" + down.output());
    }
    return new NodeCluster(dir);
  }

  /**
   * `cluster.sh prepare`: what the node needs that outlives a run (Debian's packages, the binaries,
   * the pause image), installed before anything reads the host, or aborts the calling test
   * (skipped, with what is missing) on a machine where the node cannot run: not root, no cgroups. A
   * no-op once done.
   */
  public static void prepare(Path dir) throws Exception {
    Result check = script(dir, Duration.ofMinutes(1), "check");
    Assumptions.assumeTrue(check.exitCode() == 0, check.output());
    lockMachine();
    // cold, this builds the Kubernetes binaries that .ci/run did not build already
    script(dir, Duration.ofMinutes(40), "prepare").ok();
  }

  /**
   * `cluster.sh down`, then the run's bulk: the tool images built into it and the chart's
   * PostgreSQL volume (some 800 MB a run, which filled a CI machine's disk until the kubelet
   * tainted the node with disk pressure). The logs stay, for a failure to be read.
   */
  public Result down() throws Exception {
    try {
      Result down = script(dir, Duration.ofMinutes(3), "down");
      for (String bulk : List.of("images", "postgresql-data")) {
        delete(dir.resolve(bulk));
      }
      return down;
    } finally {
      unlockMachine();
    }
  }

  private static void delete(Path tree) throws IOException {
    if (Files.exists(tree)) {
      try (Stream<Path> paths = Files.walk(tree)) {
        for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
          Files.delete(path);
        }
      }
    }
  }

  private static synchronized void lockMachine() throws IOException {
    if (machine != null) {
      return;
    }
    FileChannel channel =
        FileChannel.open(MACHINE_LOCK, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    if (channel.tryLock() == null) {
      System.out.println("another build's node runs on this machine: waiting for " + MACHINE_LOCK);
      channel.lock();
    }
    machine = channel;
  }

  private static synchronized void unlockMachine() throws IOException {
    if (machine != null) {
      machine.close();
      machine = null;
    }
  }

  public Path kubeconfig() {
    return dir.resolve("kubeconfig");
  }

  /** Seconds `up` took, as the script measured them. */
  public double upSeconds() throws IOException {
    return Double.parseDouble(Files.readString(dir.resolve("up-seconds")).strip());
  }

  /** A command line as a user types it, through bash, from the repository's root. */
  public Result sh(String command, Duration timeout) throws Exception {
    return run(List.of("bash", "-c", command), dir, timeout);
  }

  /** kubectl with these arguments, each passed as one word; fails on a non-zero exit. */
  public String kubectl(String... args) throws Exception {
    StringBuilder command = new StringBuilder("kubectl");
    for (String arg : args) {
      command.append(" '").append(arg.replace("'", "'\\''")).append('\'');
    }
    return sh(command.toString(), Duration.ofMinutes(6)).ok();
  }

  /**
   * README's `helm install` (the first command of "Run it on a cluster"), then the operator's
   * Deployment rolled out; returns helm's output.
   */
  public String installFromReadme() throws Exception {
    return installWithPostgresql(Readme.block("## Run it on a cluster").get(0));
  }

  /**
   * {@link #installFromReadme}, with the chart's PostgreSQL run as OpenShift's restricted-v2 SCC
   * would run it (docs/install.md, "OpenShift"): no runAsGroup (so group 0), runAsUser and fsGroup
   * {@code uid} (the first of the namespace's range there), and the volume's directory group-owned
   * by {@code uid} and group-writable, as a kubelet makes a volume for an fsGroup (a hostPath it
   * leaves alone).
   */
  public String installFromReadme(long uid) throws Exception {
    return installWithPostgresql(Readme.block("## Run it on a cluster").get(0), uid);
  }

  /**
   * A {@code helm install} of the chart with its PostgreSQL (examples/quickstart/values.yaml,
   * examples/durable/values.yaml) on this node, which has no registry and no volume provisioner
   * (docs/install.md, "A durable fleet"): the image {@code pallas-postgres:test}
   * (e2e/cluster/tool-images.py) loaded and named by {@code --set}, and a hostPath PersistentVolume
   * of no class for the database's claim. Returns once PostgreSQL and the operator are ready.
   */
  public String installWithPostgresql(String helmInstall) throws Exception {
    return installWithPostgresql(helmInstall, null);
  }

  private String installWithPostgresql(String helmInstall, Long uid) throws Exception {
    load(List.of(ToolImages.build(this, dir.resolve("images")).get("pallas-postgres").tarball()));
    Path data = Files.createDirectories(dir.resolve("postgresql-data"));
    // the image's user owns it, or a volume's fsGroup does, as the kubelet gives one to a volume
    String chown =
        uid == null
            ? "chown 999:999 '%1$s' && chmod 700 '%1$s'"
            : "chown 0:%2$d '%1$s' && chmod 2770 '%1$s'";
    sh(chown.formatted(data, uid), Duration.ofMinutes(1)).ok();
    Path volume = dir.resolve("postgresql-volume.yaml");
    Files.writeString(
        volume,
        """
        apiVersion: v1
        kind: PersistentVolume
        metadata:
          name: pallas-postgresql-data
        spec:
          capacity:
            storage: 8Gi
          accessModes: [ReadWriteOnce]
          persistentVolumeReclaimPolicy: Retain
          hostPath:
            path: %s
            type: Directory
        """
            .formatted(data));
    kubectl("apply", "-f", volume.toString());
    String helm =
        sh(
                helmInstall
                    + " --set store.postgresql.image.repository=pallas-postgres"
                    + ",store.postgresql.image.tag=test,store.postgresql.image.pullPolicy=Never"
                    + (uid == null
                        ? ""
                        : (",store.postgresql.podSecurityContext.runAsUser=%d"
                                + ",store.postgresql.podSecurityContext.runAsGroup=null"
                                + ",store.postgresql.podSecurityContext.fsGroup=%d")
                            .formatted(uid, uid)),
                Duration.ofMinutes(6))
            .ok();
    awaitRollout("statefulset/pallas-pallas-operator-postgresql");
    awaitRollout("deployment/pallas-pallas-operator");
    return helm;
  }

  /**
   * `kubectl rollout status` of a workload of the chart's namespace, pallas-system; when it does
   * not roll out, the failure says why: the namespace's pods and events, and the pods' last logs.
   */
  public void awaitRollout(String workload) throws Exception {
    Result rollout =
        sh(
            "kubectl rollout status '%s' --namespace pallas-system --timeout=300s"
                .formatted(workload),
            Duration.ofMinutes(6));
    if (rollout.exitCode() != 0) {
      String why =
          sh(
                  "kubectl get pods --namespace pallas-system -o wide;"
                      + " kubectl get events --namespace pallas-system --sort-by=.lastTimestamp;"
                      + " kubectl logs --namespace pallas-system --all-containers --tail=40"
                      + " --prefix -l app.kubernetes.io/instance=pallas",
                  Duration.ofMinutes(1))
              .output();
      assertThat(rollout.exitCode()).as(rollout.output() + why).isZero();
    }
  }

  /** Imports more images into the node's containerd (`cluster.sh load`). */
  public void load(List<Path> images) throws Exception {
    List<String> args = new ArrayList<>(List.of("load"));
    images.forEach(i -> args.add(i.toString()));
    script(dir, Duration.ofMinutes(5), args.toArray(String[]::new)).ok();
  }

  /** A namespace that admits only pods meeting Pod Security "restricted". */
  public void restrictedNamespace(String name) throws Exception {
    kubectl("create", "namespace", name);
    kubectl("label", "namespace", name, "pod-security.kubernetes.io/enforce=restricted");
  }

  /** ctr on the node's containerd (namespace k8s.io, where the kubelet's containers are). */
  public String ctr(String... args) throws Exception {
    List<String> command =
        new ArrayList<>(
            List.of(
                "ctr",
                "--address",
                dir.resolve("containerd/containerd.sock").toString(),
                "-n",
                "k8s.io"));
    command.addAll(List.of(args));
    return run(command, dir, Duration.ofMinutes(1)).ok();
  }

  private static Result script(Path dir, Duration timeout, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of("bash", SCRIPT.toString()));
    command.addAll(List.of(args));
    return run(command, dir, timeout);
  }

  private static Result run(List<String> command, Path dir, Duration timeout) throws Exception {
    ProcessBuilder builder = new ProcessBuilder(command).directory(ROOT.toFile());
    builder.environment().put("PALLAS_CLUSTER_DIR", dir.toString());
    builder.environment().put("KUBECONFIG", dir.resolve("kubeconfig").toString());
    builder.environment().put("PATH", GoBinaries.dir() + ":" + builder.environment().get("PATH"));
    // helm with no user configuration or repositories
    builder.environment().put("HELM_CONFIG_HOME", dir.resolve("helm/config").toString());
    builder.environment().put("HELM_CACHE_HOME", dir.resolve("helm/cache").toString());
    builder.environment().put("HELM_DATA_HOME", dir.resolve("helm/data").toString());
    Path log = Files.createTempFile("node-cluster", ".log");
    Process p = builder.redirectErrorStream(true).redirectOutput(log.toFile()).start();
    try {
      if (!p.waitFor(timeout.toSeconds(), TimeUnit.SECONDS)) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        throw new AssertionError(
            command + " did not finish in " + timeout + ":\n" + Files.readString(log));
      }
      return new Result(p.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
    } finally {
      Files.delete(log);
    }
  }
}
