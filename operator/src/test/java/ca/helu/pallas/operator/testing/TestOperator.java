package ca.helu.pallas.operator.testing;

import ca.helu.pallas.operator.OperatorConfig;
import ca.helu.pallas.operator.PallasOperator;
import java.io.IOException;
import java.util.HashMap;
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

  /**
   * Another operator in this JVM, started, for PallasDeployments labelled {@link #OTHER_OPERATOR}
   * {@code = selected} (which the shared one leaves alone), configured by {@code env} besides.
   */
  public static PallasOperator selecting(String selected, Map<String, String> env)
      throws IOException {
    Map<String, String> all = new HashMap<>(env);
    all.put("PALLAS_RUNTIME_IMAGE", IMAGE);
    all.put("PALLAS_HTTP_PORT", "0");
    all.put("PALLAS_VERIFY_INTERVAL_SECONDS", "0");
    all.put("PALLAS_RESOURCE_SELECTOR", OTHER_OPERATOR + "=" + selected);
    return new PallasOperator(KubeCluster.shared().client(), OperatorConfig.fromEnvironment(all))
        .start();
  }

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
