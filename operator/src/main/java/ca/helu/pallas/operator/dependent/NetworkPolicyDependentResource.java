package ca.helu.pallas.operator.dependent;

import ca.helu.pallas.api.NetworkPolicySpec;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.render.FleetPod;
import ca.helu.pallas.operator.render.RenderedAgent;
import ca.helu.pallas.operator.render.RenderedFleet;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRuleBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeerBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPortBuilder;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.dependent.GarbageCollected;
import io.javaoperatorsdk.operator.processing.dependent.CRUDKubernetesBulkDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.KubernetesBulkDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * NetworkPolicy {@code X-network}, unless {@code spec.networkPolicy.enabled} is false: the fleet's
 * pods admit, on their MCP ports, the fleet's own pods, the pods {@code from} names (default: the
 * fleet's namespace), the operator (its MCP handshake, docs/status.md) and the pods {@code
 * metricsFrom} names (Prometheus: /metrics shares the MCP ports); agents' probe ports admit all
 * (docs/operator.md, "Network"). A bulk dependent of at most one object, so that turning it off
 * deletes it.
 */
@KubernetesDependent(informer = @Informer(labelSelector = Selectors.MANAGED))
public class NetworkPolicyDependentResource
    extends KubernetesDependentResource<NetworkPolicy, PallasDeployment>
    implements CRUDKubernetesBulkDependentResource<NetworkPolicy, PallasDeployment>,
        KubernetesBulkDependentResource<NetworkPolicy, PallasDeployment>,
        GarbageCollected<PallasDeployment> {

  /** The label the chart gives the operator's pods (app.kubernetes.io/name: the chart's name). */
  static final Map<String, String> OPERATOR_POD = Map.of(PallasNames.LABEL_NAME, "pallas-operator");

  /** The namespace label every namespace has (Kubernetes 1.22+). */
  static final String NAMESPACE_NAME = "kubernetes.io/metadata.name";

  public NetworkPolicyDependentResource() {
    super(NetworkPolicy.class);
  }

  @Override
  public Map<ResourceID, NetworkPolicy> desiredResources(
      PallasDeployment primary, Context<PallasDeployment> context) {
    RenderedFleet fleet = Fleets.fleet(context);
    if (!fleet.primary().getSpec().effectiveNetworkPolicy().effectiveEnabled()) {
      return Map.of();
    }
    // the chart sets the lease's namespace to the operator's own (POD_NAMESPACE)
    NetworkPolicy policy = desired(fleet, Fleets.config(context).leaseNamespace());
    return Map.of(ResourceID.fromResource(policy), policy);
  }

  static NetworkPolicy desired(RenderedFleet fleet, String operatorNamespace) {
    NetworkPolicySpec spec = fleet.primary().getSpec().effectiveNetworkPolicy();
    List<NetworkPolicyPort> serving = new ArrayList<>();
    List<NetworkPolicyPort> probes = new ArrayList<>();
    for (RenderedAgent agent : fleet.agents().values()) {
      serving.add(port(agent.port()));
    }
    // one per pod: a pod group's pods answer the probes of all their agents on one port
    fleet.pods().values().stream()
        .map(FleetPod::probePort)
        .distinct()
        .forEach(p -> probes.add(port(p)));
    List<NetworkPolicyPort> agentsAndRegistry = new ArrayList<>(serving);
    agentsAndRegistry.add(port(fleet.primary().getSpec().effectiveRegistry().effectivePort()));

    List<NetworkPolicyIngressRule> rules = new ArrayList<>();
    // agents calling agents, agents reaching the registry: every port
    rules.add(
        new NetworkPolicyIngressRuleBuilder()
            .addNewFrom()
            .withPodSelector(selector(PallasNames.fleetSelector(fleet.name())))
            .endFrom()
            .build());
    rules.add(rule(peers(spec.effectiveFrom()), agentsAndRegistry));
    rules.add(
        rule(
            List.of(
                new NetworkPolicyPeerBuilder()
                    .withNamespaceSelector(selector(Map.of(NAMESPACE_NAME, operatorNamespace)))
                    .withPodSelector(selector(OPERATOR_POD))
                    .build()),
            serving));
    rules.add(rule(peers(spec.effectiveMetricsFrom()), agentsAndRegistry));
    // the kubelet's probes: from the node, which some network plugins police like any source
    rules.add(new NetworkPolicyIngressRuleBuilder().withPorts(probes).build());

    return new NetworkPolicyBuilder()
        .withMetadata(
            Owners.metadata(
                fleet,
                PallasNames.networkPolicy(fleet.name()),
                PallasNames.instanceLabels(fleet.name())))
        .withNewSpec()
        .withPodSelector(selector(PallasNames.fleetSelector(fleet.name())))
        .withPolicyTypes("Ingress")
        .withIngress(rules)
        .endSpec()
        .build();
  }

  private static NetworkPolicyIngressRule rule(
      List<NetworkPolicyPeer> from, List<NetworkPolicyPort> ports) {
    return new NetworkPolicyIngressRuleBuilder().withFrom(from).withPorts(ports).build();
  }

  /** A namespace by name (or any, for *; the fleet's, when none) and pods by labels (or all). */
  private static List<NetworkPolicyPeer> peers(List<NetworkPolicySpec.Peer> peers) {
    List<NetworkPolicyPeer> rendered = new ArrayList<>();
    for (NetworkPolicySpec.Peer peer : peers) {
      NetworkPolicyPeerBuilder b =
          new NetworkPolicyPeerBuilder()
              .withPodSelector(selector(peer.podLabels() == null ? Map.of() : peer.podLabels()));
      if (NetworkPolicySpec.ANY_NAMESPACE.equals(peer.namespace())) {
        b.withNamespaceSelector(new LabelSelector());
      } else if (peer.namespace() != null) {
        b.withNamespaceSelector(selector(Map.of(NAMESPACE_NAME, peer.namespace())));
      }
      rendered.add(b.build());
    }
    return rendered;
  }

  private static NetworkPolicyPort port(int port) {
    return new NetworkPolicyPortBuilder()
        .withProtocol("TCP")
        .withPort(new IntOrString(port))
        .build();
  }

  private static LabelSelector selector(Map<String, String> labels) {
    return new LabelSelectorBuilder().withMatchLabels(labels).build();
  }
}
