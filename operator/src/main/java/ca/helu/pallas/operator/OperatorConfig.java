package ca.helu.pallas.operator;

import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.api.validation.Formats;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;

/**
 * The operator's configuration, read once from its environment (docs/operator.md).
 *
 * @param watchNamespaces namespaces whose PallasDeployments are reconciled; empty means all
 * @param resourceSelector label selector limiting which PallasDeployments are reconciled (two
 *     operators side by side, e.g. a canary), or null for all
 * @param runtimeImage the agent-runtime image every agent and registry pod runs
 * @param imagePullPolicy that image's pull policy
 * @param imagePullSecrets Secrets (in each fleet's namespace) every agent and registry pod pulls
 *     that image with
 * @param leaderElection whether replicas elect a leader on a Lease before reconciling
 * @param leaseName the Lease's name
 * @param leaseNamespace the Lease's namespace (the operator's own)
 * @param leaseIdentity who this replica is on the Lease: its pod's name ({@code HOSTNAME}), else a
 *     random id
 * @param logLevel root log level
 * @param httpPort port of /metrics, /livez and /readyz (0: any free port)
 * @param drainSeconds how long an agent pod drains calls on SIGTERM
 * @param verifyInterval how often an agent that answered the operator's MCP handshake is asked
 *     again (docs/status.md, "Verified"); zero: agents are not asked
 * @param tracing the standard OTEL_* variables, for the operator's traces of its reconciles
 *     (docs/observability.md, "The operator's traces"); none: not traced
 * @param defaultStoreSecret the store Secret a fleet without {@code spec.store} keeps its
 *     conversations in when its namespace holds a Secret of that name (docs/operator.md, "The
 *     conversation store"), or null: such fleets keep them in memory
 * @param operatorAccount the operator's own ServiceAccount, whose tokens agents with {@code
 *     spec.auth} accept for the Verified handshake (docs/runtime.md, "Agents calling agents"), or
 *     null when it runs under none
 */
public record OperatorConfig(
    Set<String> watchNamespaces,
    String resourceSelector,
    String runtimeImage,
    String imagePullPolicy,
    List<String> imagePullSecrets,
    boolean leaderElection,
    String leaseName,
    String leaseNamespace,
    String leaseIdentity,
    String logLevel,
    int httpPort,
    int drainSeconds,
    Duration verifyInterval,
    Map<String, String> tracing,
    String defaultStoreSecret,
    ServiceAccountRef operatorAccount) {

  public static final String DEFAULT_RUNTIME_IMAGE = "pallas-agent-runtime:0.1.0";

  public OperatorConfig {
    watchNamespaces = Set.copyOf(watchNamespaces);
    imagePullSecrets = List.copyOf(imagePullSecrets);
    tracing = Map.copyOf(tracing);
  }

  /**
   * Reads the PALLAS_* variables; anything unset takes its default.
   *
   * @throws IllegalArgumentException naming a variable whose value cannot be used
   */
  public static OperatorConfig fromEnvironment(Map<String, String> env) {
    Set<String> namespaces = new TreeSet<>(list(env, "PALLAS_WATCH_NAMESPACES"));
    String selector = env.get("PALLAS_RESOURCE_SELECTOR");
    return new OperatorConfig(
        namespaces,
        selector == null || selector.isBlank() ? null : selector.trim(),
        env.getOrDefault("PALLAS_RUNTIME_IMAGE", DEFAULT_RUNTIME_IMAGE),
        env.getOrDefault("PALLAS_IMAGE_PULL_POLICY", "IfNotPresent"),
        list(env, "PALLAS_IMAGE_PULL_SECRETS"),
        bool(env, "PALLAS_LEADER_ELECTION", false),
        env.getOrDefault("PALLAS_LEASE_NAME", "pallas-operator"),
        env.getOrDefault("PALLAS_LEASE_NAMESPACE", env.getOrDefault("POD_NAMESPACE", "default")),
        leaseIdentity(env),
        env.getOrDefault("PALLAS_LOG_LEVEL", "INFO").toUpperCase(Locale.ROOT),
        number(env, "PALLAS_HTTP_PORT", 8080),
        number(env, "PALLAS_DRAIN_SECONDS", 30),
        verifyInterval(env),
        env.entrySet().stream()
            .filter(e -> e.getKey().startsWith("OTEL_"))
            .collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue)),
        defaultStoreSecret(env),
        operatorAccount(env));
  }

  /** A ServiceAccount, by namespace and name. */
  public record ServiceAccountRef(String namespace, String name) {
    /** Its tokens' subject. */
    public String subject() {
      return PallasNames.serviceAccountSubject(namespace, name);
    }
  }

  /**
   * The operator's own ServiceAccount: PALLAS_OPERATOR_SERVICE_ACCOUNT (the chart sets it from the
   * pod's spec.serviceAccountName) in POD_NAMESPACE; null when unset.
   */
  private static ServiceAccountRef operatorAccount(Map<String, String> env) {
    String account = env.getOrDefault("PALLAS_OPERATOR_SERVICE_ACCOUNT", "").trim();
    String namespace = env.getOrDefault("POD_NAMESPACE", "").trim();
    return account.isEmpty() || namespace.isEmpty()
        ? null
        : new ServiceAccountRef(namespace, account);
  }

  /** PALLAS_DEFAULT_STORE_SECRET: a Secret's name, or unset (blank) for none. */
  private static String defaultStoreSecret(Map<String, String> env) {
    String name = "PALLAS_DEFAULT_STORE_SECRET";
    String value = env.getOrDefault(name, "").trim();
    if (value.isEmpty()) {
      return null;
    }
    if (!value.matches(Formats.DNS_SUBDOMAIN) || value.length() > 253) {
      throw new IllegalArgumentException(name + ": '" + value + "' is not a Secret's name");
    }
    return value;
  }

  /**
   * PALLAS_VERIFY_INTERVAL_SECONDS, 300 by default: at most 10 minutes, the operator's periodic
   * check, which is what tells it a fleet still exists (AgentVerifier.FORGET_AFTER).
   */
  private static Duration verifyInterval(Map<String, String> env) {
    String name = "PALLAS_VERIFY_INTERVAL_SECONDS";
    int seconds = number(env, name, 300);
    if (seconds < 0 || seconds > 600) {
      throw new IllegalArgumentException(
          name + ": " + seconds + " must be from 0 (agents are not asked) to 600");
    }
    return Duration.ofSeconds(seconds);
  }

  /** The pod's name, which a container's HOSTNAME is; outside a pod, a random id. */
  private static String leaseIdentity(Map<String, String> env) {
    String hostname = env.get("HOSTNAME");
    return hostname == null || hostname.isBlank()
        ? "pallas-operator-" + UUID.randomUUID()
        : hostname.trim();
  }

  /** A comma-separated list, blanks dropped. */
  private static List<String> list(Map<String, String> env, String name) {
    return Arrays.stream(env.getOrDefault(name, "").split(","))
        .map(String::trim)
        .filter(s -> !s.isEmpty())
        .toList();
  }

  private static int number(Map<String, String> env, String name, int fallback) {
    String value = env.get(name);
    if (value == null) {
      return fallback;
    }
    try {
      return Integer.parseInt(value.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + ": '" + value + "' is not a number");
    }
  }

  private static boolean bool(Map<String, String> env, String name, boolean fallback) {
    String value = env.get(name);
    if (value == null) {
      return fallback;
    }
    return switch (value.trim().toLowerCase(Locale.ROOT)) {
      case "true" -> true;
      case "false" -> false;
      default ->
          throw new IllegalArgumentException(name + ": '" + value + "' must be true or false");
    };
  }
}
