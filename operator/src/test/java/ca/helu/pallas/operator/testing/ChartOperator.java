package ca.helu.pallas.operator.testing;

import ca.helu.pallas.operator.OperatorConfig;
import ca.helu.pallas.operator.PallasOperator;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The operator as the chart's Deployment runs it, in this JVM: with a token of the Deployment's
 * ServiceAccount (so only the chart's RBAC applies) and the environment its container declares,
 * recording every 403 the API server answers.
 */
public final class ChartOperator implements AutoCloseable {
  public final List<String> forbidden = new CopyOnWriteArrayList<>();
  public final KubernetesClient client;
  private final PallasOperator operator;

  /**
   * Starts the operator of the chart's Deployment {@code deployment} (as installed or rendered).
   */
  public ChartOperator(KubernetesClient admin, Deployment deployment) throws Exception {
    String ns = deployment.getMetadata().getNamespace();
    var pod = deployment.getSpec().getTemplate().getSpec();
    Map<String, String> env = new HashMap<>();
    for (EnvVar var : pod.getContainers().get(0).getEnv()) {
      if (var.getValue() != null) {
        env.put(var.getName(), var.getValue());
      }
    }
    env.put("POD_NAMESPACE", ns); // the downward API's values
    env.put("PALLAS_OPERATOR_SERVICE_ACCOUNT", pod.getServiceAccountName());
    env.put("PALLAS_HTTP_PORT", "0");
    Config config =
        Config.fromKubeconfig(
            Files.readString(
                LocalPod.serviceAccountKubeconfig(admin, ns, pod.getServiceAccountName())));
    client =
        new KubernetesClientBuilder()
            .withConfig(config)
            .withHttpClientBuilderConsumer(b ->
                b.addOrReplaceInterceptor(
                    "forbidden",
                    new Interceptor() {
                      @Override
                      public void after(
                          HttpRequest request,
                          HttpResponse<?> response,
                          AsyncBody.Consumer<List<ByteBuffer>> consumer) {
                        if (response.code() == 403) {
                          forbidden.add(request.method() + " " + request.uri());
                        }
                      }
                    }))
            .build();
    operator = new PallasOperator(client, OperatorConfig.fromEnvironment(env)).start();
  }

  @Override
  public void close() {
    operator.close();
    client.close();
  }
}
