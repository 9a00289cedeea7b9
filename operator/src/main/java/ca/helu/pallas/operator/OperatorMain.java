package ca.helu.pallas.operator;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@code java -jar pallas-operator.jar}: configuration from the environment (docs/operator.md). */
public final class OperatorMain {
  private static final Logger LOG = LoggerFactory.getLogger(OperatorMain.class);

  private OperatorMain() {}

  public static void main(String[] args) throws Exception {
    OperatorConfig config;
    try {
      config = OperatorConfig.fromEnvironment(System.getenv());
    } catch (IllegalArgumentException e) {
      System.err.println("pallas-operator: " + e.getMessage());
      System.exit(2);
      return;
    }
    if (LoggerFactory.getILoggerFactory() instanceof LoggerContext context) {
      context
          .getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)
          .setLevel(Level.toLevel(config.logLevel(), Level.INFO));
    }
    KubernetesClient client = new KubernetesClientBuilder().build();
    PallasOperator operator = new PallasOperator(client, config);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  LOG.info("stopping");
                  operator.close();
                  client.close();
                  stopped.countDown();
                },
                "pallas-shutdown"));
    operator.start();
    LOG.info(
        "started: watching {}, runtime image {}, endpoints on port {}",
        config.watchNamespaces().isEmpty() ? "all namespaces" : config.watchNamespaces(),
        config.runtimeImage(),
        operator.httpPort());
    stopped.await();
  }
}
