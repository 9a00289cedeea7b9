package ca.helu.pallas.runtime.registry;

import ca.helu.pallas.api.PallasNames;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * The operator's {@code X-config} ConfigMap, watched through the Kubernetes API: a change reaches
 * the registry within a second, where a mounted ConfigMap waits for the kubelet's sync (about a
 * minute). The registry's Role allows get, list and watch of that one ConfigMap (docs/operator.md).
 */
public final class ConfigMapManifestSource implements ManifestSource {
  private final KubernetesClient client;
  private final String namespace;
  private final String name;
  private SharedIndexInformer<ConfigMap> informer;

  public ConfigMapManifestSource(KubernetesClient client, String namespace, String name) {
    this.client = client;
    this.namespace = namespace;
    this.name = name;
  }

  @Override
  public String describe() {
    return "configmap " + namespace + "/" + name;
  }

  @Override
  public void start(Consumer<String> onText) {
    informer =
        client
            .configMaps()
            .inNamespace(namespace)
            .withName(name)
            .inform(
                new ResourceEventHandler<>() {
                  @Override
                  public void onAdd(ConfigMap cm) {
                    deliver(cm);
                  }

                  @Override
                  public void onUpdate(ConfigMap before, ConfigMap after) {
                    if (!Objects.equals(text(before), text(after))) {
                      deliver(after);
                    }
                  }

                  @Override
                  public void onDelete(ConfigMap cm, boolean finalStateUnknown) {
                    // the PallasDeployment is going away; keep serving the last manifest
                  }

                  private void deliver(ConfigMap cm) {
                    String text = text(cm);
                    if (text != null) {
                      onText.accept(text);
                    }
                  }
                });
  }

  private static String text(ConfigMap cm) {
    return cm == null || cm.getData() == null ? null : cm.getData().get(PallasNames.CONFIG_KEY);
  }

  @Override
  public void close() {
    if (informer != null) {
      informer.close();
    }
    client.close();
  }
}
