package ca.helu.pallas.operator.source;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasDeploymentSpec;
import ca.helu.pallas.api.SecretFields;
import ca.helu.pallas.operator.render.FleetRenderer;
import ca.helu.pallas.operator.render.SecretDigests;
import io.fabric8.kubernetes.api.model.Secret;
import io.javaoperatorsdk.operator.api.config.informer.FieldSelector;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The Secrets PallasDeployments reference (by {@code secretKeyRef}, the agents' OIDC client among
 * them, the conversation store's {@code spec.store.secretName} and the static tokens' {@code
 * spec.auth.staticTokens.secretName}): watched so that a rotated key rolls exactly the agents that
 * use it, and so that a missing one is reported (docs/operator.md). A fleet without {@code
 * spec.store} also follows the operator's default store Secret, which it uses once its namespace
 * holds one. Helm's release Secrets, the largest kind and never referenced, are not watched.
 */
public final class ReferencedSecrets {
  public static final String NAME = "referenced-secrets";
  private static final String INDEX = "pallas-secret-refs";

  private ReferencedSecrets() {}

  /**
   * @param defaultStore the operator's default store Secret (OperatorConfig), or null
   */
  public static InformerEventSource<Secret, PallasDeployment> eventSource(
      EventSourceContext<PallasDeployment> context, String defaultStore) {
    context
        .getPrimaryCache()
        .addIndexer(
            INDEX,
            d -> {
              Set<String> names = new TreeSet<>(namesOf(d.getSpec()));
              if (defaultStore != null && d.getSpec() != null && d.getSpec().store() == null) {
                names.add(defaultStore);
              }
              return names.stream().map(name -> key(d.getMetadata().getNamespace(), name)).toList();
            });
    var config =
        InformerEventSourceConfiguration.from(Secret.class, PallasDeployment.class)
            .withName(NAME)
            .withNamespacesInheritedFromController()
            .withFieldSelector(
                new FieldSelector(
                    List.of(new FieldSelector.Field("type", "helm.sh/release.v1", true))))
            .withSecondaryToPrimaryMapper(secret ->
                context
                    .getPrimaryCache()
                    .byIndex(
                        INDEX,
                        key(secret.getMetadata().getNamespace(), secret.getMetadata().getName()))
                    .stream()
                    .map(ResourceID::fromResource)
                    .collect(Collectors.toSet()))
            .build();
    return new InformerEventSource<>(config, context);
  }

  /** Digests of the referenced Secrets' keys, from the informer's cache. */
  @SuppressWarnings("unchecked")
  public static SecretDigests digests(PallasDeployment primary, Context<PallasDeployment> context) {
    var secrets =
        (InformerEventSource<Secret, PallasDeployment>)
            context.eventSourceRetriever().getEventSourceFor(Secret.class, NAME);
    String namespace = primary.getMetadata().getNamespace();
    return name -> secrets.get(new ResourceID(name, namespace)).map(ReferencedSecrets::digestsOf);
  }

  private static Map<String, String> digestsOf(Secret secret) {
    Map<String, String> digests = new TreeMap<>();
    if (secret.getData() != null) {
      secret.getData().forEach((k, v) -> digests.put(k, FleetRenderer.sha256(v)));
    }
    return digests;
  }

  /** Names of the Secrets a spec references. */
  static Set<String> namesOf(PallasDeploymentSpec spec) {
    return spec == null ? Set.of() : SecretFields.secretNames(spec);
  }

  private static String key(String namespace, String name) {
    return namespace + "/" + name;
  }
}
