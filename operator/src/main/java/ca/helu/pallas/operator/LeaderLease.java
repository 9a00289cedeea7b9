package ca.helu.pallas.operator;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.net.HttpURLConnection;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leader Lease this replica holds, given up when it stops (docs/operator.md, "Configuration"),
 * so that a standby takes over on its next try instead of when the Lease expires, and an operator
 * removed for good leaves a Lease that names no one. JOSDK 5.2 elects on fabric8's LeaderElector
 * with {@code releaseOnCancel} off and no setting to turn it on, so a stopped leader's Lease kept
 * naming it (issue 17 §8: after {@code helm uninstall}, a deleted pod).
 */
final class LeaderLease {
  private static final Logger LOG = LoggerFactory.getLogger(LeaderLease.class);

  private final KubernetesClient client;
  private final String namespace;
  private final String name;
  private final String identity;

  LeaderLease(KubernetesClient client, String namespace, String name, String identity) {
    this.client = client;
    this.namespace = namespace;
    this.name = name;
    this.identity = identity;
  }

  /**
   * Empties the Lease's holder if this replica still holds it, as client-go's release on cancel
   * does (no holder, a duration of 1 s). Called once JOSDK has stopped the controllers and the
   * elector: nothing the Lease guards runs here any more, and nothing renews it again.
   */
  void giveUp() {
    try {
      Lease lease = client.leases().inNamespace(namespace).withName(name).get();
      if (lease == null
          || lease.getSpec() == null
          || !identity.equals(lease.getSpec().getHolderIdentity())) {
        return; // a standby, or a leader that had lost the Lease already
      }
      ZonedDateTime now = ZonedDateTime.now(ZoneOffset.UTC);
      lease.getSpec().setHolderIdentity(null);
      lease.getSpec().setLeaseDurationSeconds(1);
      lease.getSpec().setAcquireTime(now);
      lease.getSpec().setRenewTime(now);
      // a PUT carrying the resourceVersion just read: should another replica have taken the Lease
      // meanwhile, the API server refuses it (409) and the new holder keeps it
      client.resource(lease).update();
      LOG.info("gave up the leader Lease {}", name);
    } catch (KubernetesClientException e) {
      if (e.getCode() == HttpURLConnection.HTTP_CONFLICT) {
        LOG.info("the leader Lease {} changed hands while this operator stopped", name);
      } else {
        LOG.warn(
            "could not give up the leader Lease {} ({}); the next leader waits for it to expire",
            name,
            e.getMessage());
      }
    }
  }
}
