package ca.helu.pallas.operator;

import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The operator's configuration, read once from its environment (docs/operator.md).
 *
 * @param watchNamespaces namespaces whose PallasDeployments are reconciled; empty means all
 * @param runtimeImage the agent-runtime image every agent and registry pod runs
 * @param imagePullPolicy that image's pull policy
 * @param leaderElection whether replicas elect a leader on a Lease before reconciling
 * @param leaseName the Lease's name
 * @param leaseNamespace the Lease's namespace (the operator's own)
 * @param logLevel root log level
 * @param httpPort port of /metrics, /livez and /readyz
 * @param drainSeconds how long an agent pod drains calls on SIGTERM
 */
public record OperatorConfig(
    Set<String> watchNamespaces,
    String runtimeImage,
    String imagePullPolicy,
    boolean leaderElection,
    String leaseName,
    String leaseNamespace,
    String logLevel,
    int httpPort,
    int drainSeconds) {

  public static final String DEFAULT_RUNTIME_IMAGE = "pallas-agent-runtime:0.1.0";

  public OperatorConfig {
    watchNamespaces = Set.copyOf(watchNamespaces);
  }

  /** Reads PALLAS_* variables; anything unset takes its default. */
  public static OperatorConfig fromEnvironment(Map<String, String> env) {
    Set<String> namespaces = new TreeSet<>();
    Arrays.stream(env.getOrDefault("PALLAS_WATCH_NAMESPACES", "").split(","))
        .map(String::trim)
        .filter(s -> !s.isEmpty())
        .forEach(namespaces::add);
    String leaseNamespace =
        env.getOrDefault("PALLAS_LEASE_NAMESPACE", env.getOrDefault("POD_NAMESPACE", "default"));
    return new OperatorConfig(
        namespaces,
        env.getOrDefault("PALLAS_RUNTIME_IMAGE", DEFAULT_RUNTIME_IMAGE),
        env.getOrDefault("PALLAS_IMAGE_PULL_POLICY", "IfNotPresent"),
        Boolean.parseBoolean(env.getOrDefault("PALLAS_LEADER_ELECTION", "false")),
        env.getOrDefault("PALLAS_LEASE_NAME", "pallas-operator"),
        leaseNamespace,
        env.getOrDefault("PALLAS_LOG_LEVEL", "INFO").toUpperCase(Locale.ROOT),
        Integer.parseInt(env.getOrDefault("PALLAS_HTTP_PORT", "8080")),
        Integer.parseInt(env.getOrDefault("PALLAS_DRAIN_SECONDS", "30")));
  }

  /** A copy that renders pods with another runtime image (tests, upgrades). */
  public OperatorConfig withRuntimeImage(String image) {
    return new OperatorConfig(
        watchNamespaces,
        image,
        imagePullPolicy,
        leaderElection,
        leaseName,
        leaseNamespace,
        logLevel,
        httpPort,
        drainSeconds);
  }
}
