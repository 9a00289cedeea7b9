package ca.helu.pallas.operator;

import ca.helu.pallas.api.PallasDeployment;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Records Kubernetes Events on a PallasDeployment (shown by {@code kubectl describe}). */
final class Events {
  private static final Logger LOG = LoggerFactory.getLogger(Events.class);
  private static final String COMPONENT = "pallas-operator";

  private final KubernetesClient client;

  Events(KubernetesClient client) {
    this.client = client;
  }

  /** A Warning; a failure to record it is logged, never thrown. */
  void warning(PallasDeployment primary, String reason, String message) {
    String now = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
    var meta = primary.getMetadata();
    try {
      client
          .v1()
          .events()
          .inNamespace(meta.getNamespace())
          .resource(
              new EventBuilder()
                  .withNewMetadata()
                  .withName(meta.getName() + "." + UUID.randomUUID().toString().substring(0, 8))
                  .withNamespace(meta.getNamespace())
                  .endMetadata()
                  .withNewInvolvedObject()
                  .withApiVersion(PallasDeployment.API_VERSION)
                  .withKind(PallasDeployment.KIND)
                  .withName(meta.getName())
                  .withNamespace(meta.getNamespace())
                  .withUid(meta.getUid())
                  .withResourceVersion(meta.getResourceVersion())
                  .endInvolvedObject()
                  .withType("Warning")
                  .withReason(reason)
                  .withMessage(message)
                  .withNewSource()
                  .withComponent(COMPONENT)
                  .endSource()
                  .withReportingComponent(COMPONENT)
                  .withReportingInstance(COMPONENT)
                  .withFirstTimestamp(now)
                  .withLastTimestamp(now)
                  .withCount(1)
                  .build())
          .create();
    } catch (KubernetesClientException e) {
      LOG.warn("cannot record event {}: {}", reason, e.getMessage());
    }
  }
}
