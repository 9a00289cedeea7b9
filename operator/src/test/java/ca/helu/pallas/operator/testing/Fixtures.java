package ca.helu.pallas.operator.testing;

import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.ManifestParser;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import com.fasterxml.jackson.core.JsonProcessingException;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** PallasDeployments in tests: create from YAML, read conditions, list what they own. */
public final class Fixtures {
  private Fixtures() {}

  private static KubernetesClient k8s() {
    return KubeCluster.shared().client();
  }

  /**
   * Reads {@code spec:} YAML (indented by two) into a deployment named {@code name} in ns, without
   * validating it: tests send invalid ones on purpose.
   */
  public static PallasDeployment parse(String name, String namespace, String spec) {
    try {
      PallasDeployment d =
          ManifestParser.yamlMapper()
              .readValue(
                  "apiVersion: pallas.helu.ca/v1alpha1\nkind: PallasDeployment\nmetadata: {name: "
                      + name
                      + "}\nspec:\n"
                      + spec,
                  PallasDeployment.class);
      d.getMetadata().setNamespace(namespace);
      return d;
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(e);
    }
  }

  public static PallasDeployment create(String name, String namespace, String spec) {
    return k8s().resource(parse(name, namespace, spec)).create();
  }

  /** Replaces the spec as a user's {@code kubectl apply} would, retrying on a write conflict. */
  public static void replaceSpec(PallasDeployment d, String spec) {
    PallasDeployment next = parse(d.name(), d.getMetadata().getNamespace(), spec);
    for (int attempt = 0; ; attempt++) {
      PallasDeployment current = get(d);
      current.setSpec(next.getSpec());
      try {
        k8s().resource(current).update();
        return;
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409 || attempt == 10) {
          throw e;
        }
      }
    }
  }

  public static PallasDeployment get(PallasDeployment d) {
    return k8s().resource(d).get();
  }

  public static Optional<Condition> condition(PallasDeployment d, String type) {
    PallasDeployment now = get(d);
    if (now == null || now.getStatus() == null || now.getStatus().conditions() == null) {
      return Optional.empty();
    }
    return now.getStatus().conditions().stream().filter(c -> type.equals(c.getType())).findFirst();
  }

  /** Waits until condition {@code type} has {@code reason}, and returns it. */
  public static Condition awaitCondition(PallasDeployment d, String type, String reason) {
    return await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> condition(d, type), c -> c.isPresent() && reason.equals(c.get().getReason()))
        .orElseThrow();
  }

  /** The messages of the Warning events of a namespace. */
  public static List<String> warnings(String ns) {
    return k8s().v1().events().inNamespace(ns).list().getItems().stream()
        .filter(e -> "Warning".equals(e.getType()))
        .map(Event::getMessage)
        .toList();
  }

  public static Deployment agentDeployment(PallasDeployment d, String agent) {
    return k8s()
        .apps()
        .deployments()
        .inNamespace(d.getMetadata().getNamespace())
        .withName(PallasNames.agentObject(d.name(), agent))
        .get();
  }

  /** Waits for an agent's Deployment, marks it available, and returns it. */
  public static Deployment awaitAndMarkAvailable(PallasDeployment d, String agent) {
    Deployment dep =
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> agentDeployment(d, agent), x -> x != null);
    KubeCluster.shared().markAvailable(dep);
    return dep;
  }

  public static Deployment registryDeployment(PallasDeployment d) {
    return k8s()
        .apps()
        .deployments()
        .inNamespace(d.getMetadata().getNamespace())
        .withName(PallasNames.registryObject(d.name()))
        .get();
  }

  public static Deployment awaitRegistryAndMarkAvailable(PallasDeployment d) {
    Deployment dep =
        await().atMost(Duration.ofSeconds(30)).until(() -> registryDeployment(d), x -> x != null);
    KubeCluster.shared().markAvailable(dep);
    return dep;
  }

  /** Every object of the deployment's instance label, by kind/name, with its resourceVersion. */
  public static Map<String, String> ownedVersions(PallasDeployment d) {
    String ns = d.getMetadata().getNamespace();
    Map<String, String> versions = new TreeMap<>();
    List<MixedOperation<? extends HasMetadata, ?, ?>> kinds =
        List.of(
            k8s().configMaps(),
            k8s().secrets(),
            k8s().services(),
            k8s().apps().deployments(),
            k8s().serviceAccounts(),
            k8s().rbac().roles(),
            k8s().rbac().roleBindings(),
            k8s().autoscaling().v2().horizontalPodAutoscalers(),
            k8s().policy().v1().podDisruptionBudget());
    for (MixedOperation<? extends HasMetadata, ?, ?> kind : kinds) {
      kind.inNamespace(ns)
          .withLabel(PallasNames.LABEL_INSTANCE, d.name())
          .resources()
          .map(r -> r.item())
          .forEach(o ->
              versions.put(
                  o.getKind() + "/" + o.getMetadata().getName(),
                  o.getMetadata().getResourceVersion()));
    }
    return versions;
  }

  /** Creates or replaces a Secret. */
  public static void secret(String ns, String name, Map<String, String> data) {
    k8s()
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(ns)
                .endMetadata()
                .withStringData(data)
                .build())
        .serverSideApply();
  }

  /** The pod template hash of an agent's Deployment. */
  public static String configHash(PallasDeployment d, String agent) {
    return configHash(agentDeployment(d, agent));
  }

  /** The pod template hash of the registry's Deployment. */
  public static String registryHash(PallasDeployment d) {
    return configHash(registryDeployment(d));
  }

  private static String configHash(Deployment deployment) {
    return deployment
        .getSpec()
        .getTemplate()
        .getMetadata()
        .getAnnotations()
        .get(PallasNames.CONFIG_HASH_ANNOTATION);
  }
}
