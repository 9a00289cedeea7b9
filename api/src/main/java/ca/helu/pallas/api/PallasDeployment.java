package ca.helu.pallas.api;

import com.fasterxml.jackson.annotation.JsonIgnore;
import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Categories;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * A PallasDeployment as it appears in a file or in the API server: one fleet of agents, their
 * downstream MCP servers, model providers and registry (docs/crd-reference.md). The same class is
 * the runtime's manifest and the operator's custom resource.
 */
@Group(PallasDeployment.GROUP)
@Version(PallasDeployment.VERSION)
@ShortNames("pallas")
// `kubectl get pallas` or `kubectl get mcp` (with other MCP operators' kinds) lists fleets; not
// `all`: the fleet's Deployments, Services and pods already show there (docs/operator.md,
// "kubectl")
@Categories({"pallas", "mcp"})
@AdditionalPrinterColumn(
    name = "Ready",
    jsonPath = ".status.conditions[?(@.type==\"Ready\")].status",
    getDescription = "Every agent and the registry serve")
@AdditionalPrinterColumn(
    name = "Agents",
    jsonPath = ".status.agentsReady",
    getDescription = "Agents ready / agents")
@AdditionalPrinterColumn(
    name = "Registry URL",
    jsonPath = ".status.registryUrl",
    getDescription = "Where Daedalus finds every agent")
// only with -o wide: a handshake's result, not a state users watch at every `kubectl get`
@AdditionalPrinterColumn(
    name = "Verified",
    jsonPath = ".status.conditions[?(@.type==\"Verified\")].status",
    getDescription = "Every agent's MCP endpoint answered initialize and tools/list",
    priority = 1)
@AdditionalPrinterColumn(
    name = "Age",
    jsonPath = ".metadata.creationTimestamp",
    type = AdditionalPrinterColumn.Type.DATE)
public class PallasDeployment extends CustomResource<PallasDeploymentSpec, PallasDeploymentStatus>
    implements Namespaced {

  public static final String GROUP = "pallas.helu.ca";
  public static final String VERSION = "v1alpha1";
  public static final String API_VERSION = GROUP + "/" + VERSION;
  public static final String KIND = "PallasDeployment";

  public PallasDeployment() {}

  public PallasDeployment(ObjectMeta metadata, PallasDeploymentSpec spec) {
    setMetadata(metadata);
    setSpec(spec);
  }

  /** The metadata name, or {@code null} when absent. */
  @JsonIgnore
  public String name() {
    return getMetadata() == null ? null : getMetadata().getName();
  }
}
