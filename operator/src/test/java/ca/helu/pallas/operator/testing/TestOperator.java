package ca.helu.pallas.operator.testing;

import ca.helu.pallas.operator.OperatorConfig;
import ca.helu.pallas.operator.PallasOperator;
import java.io.IOException;
import java.util.Map;

/** The operator, in this JVM, against {@link KubeCluster}; one for every test that needs it. */
public final class TestOperator {
  public static final String IMAGE = "pallas-agent-runtime:test";

  /** PallasDeployments with this label are left to an operator a test runs as a process. */
  public static final String OTHER_OPERATOR = "pallas.helu.ca/test-operator";

  public static final OperatorConfig CONFIG =
      OperatorConfig.fromEnvironment(
          Map.of(
              "PALLAS_RUNTIME_IMAGE",
              IMAGE,
              "PALLAS_HTTP_PORT",
              "0",
              "PALLAS_RESOURCE_SELECTOR",
              "!" + OTHER_OPERATOR));

  private static PallasOperator shared;

  private TestOperator() {}

  public static synchronized PallasOperator shared() {
    if (shared == null) {
      try {
        shared = new PallasOperator(KubeCluster.shared().client(), CONFIG).start();
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
      Runtime.getRuntime().addShutdownHook(new Thread(shared::close, "operator-stop"));
    }
    return shared;
  }
}
