package ca.helu.pallas.operator.dependent;

import ca.helu.pallas.api.MonitoringSpec.ServiceMonitorSpec;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.render.RenderedFleet;
import ca.helu.pallas.operator.source.ServiceMonitorCrd;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.dependent.DependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.javaoperatorsdk.operator.processing.dependent.workflow.Condition;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * ServiceMonitor {@code X} (monitoring.coreos.com/v1) selecting every agent's and the registry's
 * Service, so Prometheus scrapes every pod's /metrics. Active only when the spec asks for it and
 * the Prometheus Operator's CRD is installed ({@link Enabled}, {@link CrdInstalled}).
 */
@KubernetesDependent(informer = @Informer(labelSelector = Selectors.MANAGED))
public class ServiceMonitorDependentResource
    extends CRUDKubernetesDependentResource<ServiceMonitor, PallasDeployment> {

  /** Service labels copied onto every scraped series (as app_kubernetes_io_name and so on). */
  static final List<String> TARGET_LABELS =
      List.of(PallasNames.LABEL_NAME, PallasNames.LABEL_INSTANCE, PallasNames.LABEL_COMPONENT);

  public ServiceMonitorDependentResource() {
    super(ServiceMonitor.class);
  }

  @Override
  protected ServiceMonitor desired(PallasDeployment primary, Context<PallasDeployment> context) {
    return desired(Fleets.fleet(context));
  }

  static ServiceMonitor desired(RenderedFleet fleet) {
    ServiceMonitorSpec wanted = fleet.primary().getSpec().monitoring().serviceMonitor();
    Map<String, String> labels = new LinkedHashMap<>();
    if (wanted.labels() != null) {
      labels.putAll(wanted.labels());
    }
    labels.putAll(PallasNames.instanceLabels(fleet.name()));
    Map<String, Object> endpoint = new LinkedHashMap<>();
    endpoint.put("port", PallasNames.PORT_NAME);
    endpoint.put("path", "/metrics");
    if (wanted.interval() != null) {
      endpoint.put("interval", wanted.interval());
    }
    Map<String, Object> selector =
        Map.of(
            "matchLabels",
            Map.of(
                PallasNames.LABEL_NAME, PallasNames.APP, PallasNames.LABEL_INSTANCE, fleet.name()));
    ServiceMonitor monitor = new ServiceMonitor();
    monitor.setMetadata(Owners.metadata(fleet, fleet.name(), labels));
    monitor.setSpec(
        Map.of(
            "selector",
            selector,
            "namespaceSelector",
            Map.of("matchNames", List.of(fleet.namespace())),
            "endpoints",
            List.of(endpoint),
            // alerts and dashboards tell pods apart by PallasDeployment and component
            "targetLabels",
            TARGET_LABELS));
    return monitor;
  }

  /** The Prometheus Operator's CRD is installed (otherwise no informer can be registered). */
  public static class CrdInstalled implements Condition<ServiceMonitor, PallasDeployment> {
    @Override
    public boolean isMet(
        DependentResource<ServiceMonitor, PallasDeployment> dependentResource,
        PallasDeployment primary,
        Context<PallasDeployment> context) {
      return ServiceMonitorCrd.installed(context);
    }
  }

  /** The spec asks for a ServiceMonitor; when it stops asking, the ServiceMonitor is deleted. */
  public static class Enabled implements Condition<ServiceMonitor, PallasDeployment> {
    @Override
    public boolean isMet(
        DependentResource<ServiceMonitor, PallasDeployment> dependentResource,
        PallasDeployment primary,
        Context<PallasDeployment> context) {
      return ServiceMonitorCrd.wanted(primary);
    }
  }
}
