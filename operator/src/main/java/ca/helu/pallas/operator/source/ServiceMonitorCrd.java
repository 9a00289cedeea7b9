package ca.helu.pallas.operator.source;

import ca.helu.pallas.api.MonitoringSpec;
import ca.helu.pallas.api.PallasDeployment;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.javaoperatorsdk.operator.api.config.informer.FieldSelector;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Watches for the Prometheus Operator's ServiceMonitor CRD, so that a deployment asking for a
 * ServiceMonitor gets one as soon as the CRD is installed, without a restart.
 */
public final class ServiceMonitorCrd {
  public static final String NAME = "servicemonitor-crd";
  public static final String CRD_NAME = "servicemonitors.monitoring.coreos.com";

  private ServiceMonitorCrd() {}

  public static InformerEventSource<CustomResourceDefinition, PallasDeployment> eventSource(
      EventSourceContext<PallasDeployment> context) {
    var config =
        InformerEventSourceConfiguration.from(
                CustomResourceDefinition.class, PallasDeployment.class)
            .withName(NAME)
            .withWatchAllNamespaces()
            .withFieldSelector(
                new FieldSelector(List.of(new FieldSelector.Field("metadata.name", CRD_NAME))))
            .withSecondaryToPrimaryMapper(crd ->
                context
                    .getPrimaryCache()
                    .list()
                    .filter(ServiceMonitorCrd::wanted)
                    .map(ResourceID::fromResource)
                    .collect(Collectors.toSet()))
            .build();
    return new InformerEventSource<>(config, context);
  }

  /** Whether the deployment asks for a ServiceMonitor. */
  public static boolean wanted(PallasDeployment d) {
    MonitoringSpec monitoring = d.getSpec() == null ? null : d.getSpec().monitoring();
    return monitoring != null
        && monitoring.serviceMonitor() != null
        && Boolean.TRUE.equals(monitoring.serviceMonitor().enabled());
  }

  /** Whether the ServiceMonitor CRD is installed, from the informer's cache. */
  @SuppressWarnings("unchecked")
  public static boolean installed(Context<PallasDeployment> context) {
    var crds =
        (InformerEventSource<CustomResourceDefinition, PallasDeployment>)
            context.eventSourceRetriever().getEventSourceFor(CustomResourceDefinition.class, NAME);
    return crds.get(new ResourceID(CRD_NAME, null)).isPresent();
  }
}
