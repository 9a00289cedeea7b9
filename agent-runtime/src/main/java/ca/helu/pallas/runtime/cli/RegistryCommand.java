package ca.helu.pallas.runtime.cli;

import ca.helu.pallas.api.AuthSpec;
import ca.helu.pallas.api.InvalidDeploymentException;
import ca.helu.pallas.api.ManifestParser;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.runtime.auth.InboundAuth;
import ca.helu.pallas.runtime.auth.ProjectedTokens;
import ca.helu.pallas.runtime.auth.StaticTokens;
import ca.helu.pallas.runtime.config.Environment;
import ca.helu.pallas.runtime.config.Secrets;
import ca.helu.pallas.runtime.downstream.Credentials;
import ca.helu.pallas.runtime.downstream.McpToolServers;
import ca.helu.pallas.runtime.metrics.PallasMetrics;
import ca.helu.pallas.runtime.registry.ConfigMapManifestSource;
import ca.helu.pallas.runtime.registry.FileManifestSource;
import ca.helu.pallas.runtime.registry.ManifestSource;
import ca.helu.pallas.runtime.registry.RegistryServer;
import ca.helu.pallas.runtime.serve.PodIdentity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The registry pod: serves server.json for a manifest and follows its changes. The operator runs it
 * on its {@code X-config} ConfigMap, read through the API so that a change shows within seconds
 * (docs/operator.md); a file works too. A manifest that becomes invalid is reported and the last
 * good one kept. Agents are published at {@code spec.host} or their Service's cluster DNS name.
 */
final class RegistryCommand implements Command {
  static final String DESCRIPTION =
      "Serve the registry of a PallasDeployment (the Kubernetes registry pod).";
  private static final Logger LOG = LoggerFactory.getLogger(RegistryCommand.class);

  final CommonOptions common = new CommonOptions();
  String configMap;
  String namespace;
  Path staticTokens;
  int reloadSeconds = 2;

  @Override
  public CommandOptions options() {
    CommandOptions options = new CommandOptions("registry", DESCRIPTION);
    common.addTo(options);
    return options
        .value(
            "--config-map",
            "NAME",
            "Follow this ConfigMap's "
                + PallasNames.CONFIG_KEY
                + " through the Kubernetes API (in-cluster credentials or $KUBECONFIG) instead of"
                + " a file",
            v -> configMap = v)
        .value(
            "--namespace",
            "NAMESPACE",
            "Namespace of --config-map (default: the client's namespace)",
            v -> namespace = v)
        .value(
            "--static-tokens",
            "DIR",
            "With spec.auth.staticTokens: the callers' tokens, one file per caller named after it"
                + " (default: $PALLAS_STATIC_TOKENS_DIR), for the registry's /mcp",
            v -> staticTokens = Path.of(v))
        .value(
            "--reload-seconds",
            "SECONDS",
            "How often a manifest file is re-read (default: " + reloadSeconds + ")",
            v -> reloadSeconds = CommandOptions.intValue("--reload-seconds", v));
  }

  private final Object lock = new Object();
  private final CompletableFuture<PallasDeployment> firstGood = new CompletableFuture<>();
  private volatile PallasDeployment current;
  private RegistryServer server;

  @Override
  public int call() throws Exception {
    Environment env = common.environment();
    ManifestSource source;
    try {
      source = configMap != null ? configMapSource() : fileSource(env);
    } catch (InvalidDeploymentException e) {
      System.err.println(e.getMessage());
      return 2;
    }
    source.start(text -> accept(text, source.describe()));
    PallasDeployment first = awaitFirst(source);
    StaticTokens tokens;
    try {
      tokens = staticTokens(env, first);
      InboundAuth.check(first.getSpec().auth(), tokens);
    } catch (IllegalArgumentException e) {
      System.err.println("registry: cannot start: " + e.getMessage());
      source.close();
      return 2;
    }
    PallasMetrics metrics = new PallasMetrics();
    RegistryServer.Options options =
        new RegistryServer.Options(
            common.bind,
            first.getSpec().effectiveRegistry().effectivePort(),
            agent -> PallasNames.agentUrl(current, agent),
            // following the operator's ConfigMap, the registry runs in the cluster and reaches each
            // agent at its Service; following a file, at the URL it publishes
            configMap != null
                ? agent -> PallasNames.peerUrl(current, agent)
                : agent -> PallasNames.agentUrl(current, agent),
            PallasNames.registryMcpUrl(first),
            tokens,
            new McpToolServers(new Secrets(env), Duration.ofMinutes(10)),
            List.of(),
            RegistryServer.LINK_TIMEOUT,
            RegistryServer.LINK_INTERVAL,
            linkCredentials(first, env));
    synchronized (lock) {
      server = new RegistryServer(options, current.getSpec(), metrics).start();
    }
    System.out.println(
        "registry: http://localhost:" + server.port() + "/.well-known/mcp/server.json");
    metrics.bindJvmMetrics();
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  source.close();
                  server.close();
                },
                "pallas-shutdown"));
    Thread.currentThread().join();
    return 0;
  }

  /**
   * The static tokens of --static-tokens or PALLAS_STATIC_TOKENS_DIR, when the manifest asks for
   * them (the operator mounts them in the registry pod, docs/operator.md); null otherwise.
   */
  private StaticTokens staticTokens(Environment env, PallasDeployment deployment) {
    AuthSpec auth = deployment.getSpec().auth();
    if (auth == null || auth.staticTokens() == null) {
      return null;
    }
    return CommonOptions.staticTokens(staticTokens, env);
  }

  /**
   * What the registry pod presents to each agent it follows, with {@code spec.auth}: the token the
   * kubelet projects for that agent into its identity volume (the operator renders it;
   * docs/runtime.md, "Agents calling agents"); nothing outside such a pod.
   */
  private static Function<String, Credentials> linkCredentials(
      PallasDeployment deployment, Environment env) {
    if (deployment.getSpec().auth() == null) {
      return agent -> Credentials.NONE;
    }
    return PodIdentity.from(env)
        .<Function<String, Credentials>>map(pod -> {
          ProjectedTokens tokens = new ProjectedTokens(pod.dir());
          return agent -> Credentials.peer(null, () -> tokens.tokenFor(agent));
        })
        .orElse(agent -> Credentials.NONE);
  }

  private ManifestSource fileSource(Environment env) {
    Path file = common.resolve(env);
    FileManifestSource source = new FileManifestSource(file, Duration.ofSeconds(reloadSeconds));
    String text;
    try {
      text = source.read();
    } catch (IOException e) {
      throw new InvalidDeploymentException(
          file.toString(), List.of("cannot read file: " + e.getMessage()));
    }
    // a file that is invalid at the start is an error, not something to wait for
    accept(ManifestParser.parse(text, file.toString()));
    return source;
  }

  private ManifestSource configMapSource() {
    KubernetesClient client = new KubernetesClientBuilder().build();
    String ns = namespace != null ? namespace : client.getNamespace();
    return new ConfigMapManifestSource(client, ns, configMap);
  }

  private PallasDeployment awaitFirst(ManifestSource source) throws Exception {
    while (true) {
      try {
        return firstGood.get(30, TimeUnit.SECONDS);
      } catch (TimeoutException e) {
        LOG.warn("still waiting for a valid manifest in {}", source.describe());
      }
    }
  }

  private void accept(String text, String where) {
    PallasDeployment next;
    try {
      next = ManifestParser.parse(text, where);
    } catch (InvalidDeploymentException e) {
      LOG.error(
          current == null
              ? "the manifest is invalid; waiting for a valid one: {}"
              : "manifest changed but is invalid; still serving the last good one: {}",
          e.getMessage());
      return;
    }
    accept(next);
  }

  private void accept(PallasDeployment next) {
    synchronized (lock) {
      current = next;
      if (server != null) {
        server.update(next.getSpec());
        LOG.info("registry reloaded: {} agents", next.getSpec().effectiveAgents().size());
      }
      firstGood.complete(next);
    }
  }
}
