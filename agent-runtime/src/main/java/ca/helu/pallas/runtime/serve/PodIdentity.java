package ca.helu.pallas.runtime.serve;

import ca.helu.pallas.runtime.auth.ServiceAccountTokens;
import ca.helu.pallas.runtime.config.Environment;
import java.nio.file.Path;
import java.util.Optional;

/**
 * An agent pod's identity (docs/runtime.md, "Agents calling agents"), from the environment the
 * operator renders: the projected volume of its ServiceAccount tokens ({@code
 * PALLAS_IDENTITY_DIR}), the API server whose service-account issuer signs them ({@code
 * KUBERNETES_SERVICE_HOST} and {@code _PORT}, which the kubelet sets), and the operator's
 * ServiceAccount, whose tokens may ask what a client without a token may ({@code
 * PALLAS_OPERATOR_SUBJECT}).
 *
 * @param dir where the pod's identity volume is mounted
 * @param operatorSubject the operator's ServiceAccount subject, or null
 */
public record PodIdentity(Path dir, ServiceAccountTokens.ApiServer api, String operatorSubject) {
  /** The identity the environment gives, or empty outside an agent pod of a fleet with auth. */
  public static Optional<PodIdentity> from(Environment env) {
    Optional<String> dir = env.get("PALLAS_IDENTITY_DIR").filter(v -> !v.isBlank());
    Optional<String> host = env.get("KUBERNETES_SERVICE_HOST").filter(v -> !v.isBlank());
    if (dir.isEmpty() || host.isEmpty()) {
      return Optional.empty();
    }
    Path identity = Path.of(dir.get());
    return Optional.of(
        new PodIdentity(
            identity,
            ServiceAccountTokens.ApiServer.of(
                host.get(), env.get("KUBERNETES_SERVICE_PORT").orElse("443"), identity),
            env.get("PALLAS_OPERATOR_SUBJECT").filter(v -> !v.isBlank()).orElse(null)));
  }
}
