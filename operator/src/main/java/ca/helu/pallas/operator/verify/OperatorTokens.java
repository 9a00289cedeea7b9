package ca.helu.pallas.operator.verify;

import ca.helu.pallas.operator.OperatorConfig.ServiceAccountRef;
import io.fabric8.kubernetes.api.model.authentication.TokenRequest;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Tokens of the operator's own ServiceAccount for one agent at a time (docs/status.md, "Verified";
 * docs/runtime.md, "Agents calling agents"): a TokenRequest whose audience is the agent's resource
 * identifier, which an agent of a fleet with {@code spec.auth} accepts from the operator for what a
 * client without a token may do (initialize, tools/list, get_health) even with {@code openHealth:
 * false}. Each is reused until half its lifetime has passed. The chart allows creating tokens of
 * this one ServiceAccount and no other.
 */
public final class OperatorTokens {
  static final long LIFETIME_SECONDS = 600; // the least the API server issues

  private record Issued(String token, Instant renewAt) {}

  /** No token could be had; the message says why, in words for the status. */
  public static final class Unavailable extends Exception {
    Unavailable(String message) {
      super(message, null, false, false);
    }
  }

  private final KubernetesClient client;
  private final ServiceAccountRef account;
  private final Clock clock;
  private final Map<String, Issued> byAudience = new ConcurrentHashMap<>();

  public OperatorTokens(KubernetesClient client, ServiceAccountRef account, Clock clock) {
    this.client = client;
    this.account = account;
    this.clock = clock;
  }

  /** A token of the operator's ServiceAccount meant for {@code audience}. */
  public String forAudience(String audience) throws Unavailable {
    Issued known = byAudience.get(audience);
    if (known != null && clock.instant().isBefore(known.renewAt())) {
      return known.token();
    }
    TokenRequest answer;
    try {
      answer =
          client
              .serviceAccounts()
              .inNamespace(account.namespace())
              .withName(account.name())
              .tokenRequest(
                  new TokenRequestBuilder()
                      .withNewSpec()
                      .withAudiences(audience)
                      .withExpirationSeconds(LIFETIME_SECONDS)
                      .endSpec()
                      .build());
    } catch (KubernetesClientException e) {
      throw new Unavailable(
          "the operator cannot get a token of its ServiceAccount "
              + account.namespace()
              + "/"
              + account.name()
              + " (HTTP "
              + e.getCode()
              + "; the chart's RBAC allows serviceaccounts/token for it)");
    }
    String token = answer.getStatus().getToken();
    Instant now = clock.instant();
    Instant expires = Instant.parse(answer.getStatus().getExpirationTimestamp());
    Issued issued = new Issued(token, now.plus(Duration.between(now, expires).dividedBy(2)));
    byAudience.put(audience, issued);
    return token;
  }
}
