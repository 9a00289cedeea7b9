package ca.helu.pallas.operator;

import io.fabric8.kubernetes.client.KubernetesClient;
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

/**
 * The operator process: JOSDK with the PallasDeployment reconciler, its Micrometer metrics, and the
 * HTTP endpoints. Started by {@link OperatorMain}; tests run it in their own JVM.
 */
public final class PallasOperator implements AutoCloseable {
  private final Operator operator;
  private final OperatorHttp http;

  public PallasOperator(KubernetesClient client, OperatorConfig config) throws IOException {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    new JvmMemoryMetrics().bindTo(registry);
    new JvmGcMetrics().bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    operator =
        new Operator(o -> {
          o.withKubernetesClient(client)
              .withMetrics(MicrometerMetrics.withoutPerResourceMetrics(registry))
              .withCloseClientOnStop(false);
          if (config.leaderElection()) {
            o.withLeaderElectionConfiguration(
                new LeaderElectionConfiguration(config.leaseName(), config.leaseNamespace()));
          }
        });
    operator.register(
        new PallasDeploymentReconciler(config, new Events(client), Clock.systemUTC()),
        o -> {
          if (!config.watchNamespaces().isEmpty()) {
            o.settingNamespaces(config.watchNamespaces());
          }
        });
    http =
        new OperatorHttp(
            config.httpPort(),
            registry::scrape,
            () -> true,
            () -> operator.getRuntimeInfo().isStarted());
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

  @Override
  public void close() {
    operator.stop();
    http.close();
  }
}
