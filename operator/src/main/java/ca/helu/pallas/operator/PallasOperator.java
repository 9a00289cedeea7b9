package ca.helu.pallas.operator;

import ca.helu.pallas.operator.verify.AgentEndpoints;
import ca.helu.pallas.operator.verify.AgentVerifier;
import ca.helu.pallas.operator.verify.McpHandshake;
import ca.helu.pallas.operator.verify.OperatorTokens;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.javaoperatorsdk.operator.monitoring.micrometer.MicrometerMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.time.Clock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operator process: JOSDK with the PallasDeployment reconciler, its Micrometer metrics, and the
 * HTTP endpoints. Started by {@link OperatorMain}; tests run it in their own JVM.
 */
public final class PallasOperator implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PallasOperator.class);

  static final int RECONCILE_THREADS = 10;
  static final int WORKFLOW_THREADS = 20;

  private final Operator operator;
  private final OperatorHttp http;
  private final ReconcileTracing tracing;
  // null without leader election
  private final LeaderLease lease;
  // null when agents are not asked (PALLAS_VERIFY_INTERVAL_SECONDS=0)
  private final AgentVerifier verifier;
  private volatile boolean stopping;

  public PallasOperator(KubernetesClient client, OperatorConfig config) throws IOException {
    this(client, config, AgentEndpoints.SERVICE);
  }

  /**
   * @param endpoints where the operator asks agents' MCP endpoints (their Services in a cluster)
   */
  public PallasOperator(KubernetesClient client, OperatorConfig config, AgentEndpoints endpoints)
      throws IOException {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    new JvmMemoryMetrics().bindTo(registry);
    new JvmGcMetrics().bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    tracing =
        ReconcileTracing.of(
            MicrometerMetrics.withoutPerResourceMetrics(registry), config.tracing());
    lease =
        config.leaderElection()
            ? new LeaderLease(
                client, config.leaseNamespace(), config.leaseName(), config.leaseIdentity())
            : null;
    operator =
        new Operator(o -> {
          o.withKubernetesClient(client)
              .withMetrics(tracing)
              .withCloseClientOnStop(false)
              // JOSDK's 50 + 50 threads only add memory: reconciles wait on the API server, and 50
              // fleets of 10 agents converge well within the target with these (docs/benchmarks.md)
              .withConcurrentReconciliationThreads(RECONCILE_THREADS)
              .withConcurrentWorkflowExecutorThreads(WORKFLOW_THREADS);
          if (config.leaderElection()) {
            o.withLeaderElectionConfiguration(leaderElection(config));
          }
        });
    verifier =
        config.verifyInterval().isZero()
            ? null
            : new AgentVerifier(
                endpoints,
                new McpHandshake(),
                config.operatorAccount() == null
                    ? null
                    : new OperatorTokens(client, config.operatorAccount(), Clock.systemUTC()),
                config.verifyInterval(),
                Clock.systemUTC());
    operator.register(
        new PallasDeploymentReconciler(config, new Events(client), Clock.systemUTC(), verifier),
        o -> {
          if (!config.watchNamespaces().isEmpty()) {
            o.settingNamespaces(config.watchNamespaces());
          }
          if (config.resourceSelector() != null) {
            o.withLabelSelector(config.resourceSelector());
          }
        });
    http =
        new OperatorHttp(
            config.httpPort(),
            registry::scrape,
            () -> true,
            () -> operator.getRuntimeInfo().isStarted());
  }

  /**
   * Leader election on the Lease, under this replica's identity (so that {@link LeaderLease} knows
   * whether it still holds it). A replica that loses the lease while running exits, so two never
   * reconcile at once; losing it because this process is stopping is not a failure (JOSDK's own
   * exit would deadlock the shutdown hook).
   */
  private LeaderElectionConfiguration leaderElection(OperatorConfig config) {
    return new LeaderElectionConfiguration(
        config.leaseName(),
        config.leaseNamespace(),
        LeaderElectionConfiguration.LEASE_DURATION_DEFAULT_VALUE,
        LeaderElectionConfiguration.RENEW_DEADLINE_DEFAULT_VALUE,
        LeaderElectionConfiguration.RETRY_PERIOD_DEFAULT_VALUE,
        config.leaseIdentity(),
        new LeaderCallbacks(
            () -> LOG.info("leading: reconciling"),
            () -> {
              if (!stopping) {
                LOG.error("lost the leader lease {}; exiting", config.leaseName());
                Thread.ofPlatform().start(() -> System.exit(1));
              }
            },
            // null: the holder gave the Lease up (LeaderLease) and no one has taken it yet
            leader -> LOG.info("leader is {}", leader == null ? "no one" : leader)),
        false);
  }

  /** Starts the endpoints, then the controllers (after the caches have synced). */
  public PallasOperator start() {
    http.start();
    operator.start();
    return this;
  }

  public int httpPort() {
    return http.port();
  }

  /** Stops the controllers, then gives the leader Lease up: a standby takes over at once. */
  @Override
  public void close() {
    stopping = true;
    operator.stop();
    if (verifier != null) {
      verifier.close();
    }
    if (lease != null) {
      lease.giveUp();
    }
    http.close();
    tracing.close();
  }
}
