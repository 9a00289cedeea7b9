package ca.helu.pallas.api.validation;

import java.util.List;
import java.util.stream.Stream;

/**
 * Every rule of the manifest: the CRD carries each as CEL (CrdFile adds them to the generated
 * schema) and {@link DeploymentValidator} checks each on a parsed manifest. A rule is added here,
 * once; CelRulesIT sends each one's example to a real API server and to the validator.
 */
public final class Rules {
  public static final List<Rule> ALL =
      Stream.of(
              FleetRules.RULES,
              AgentRules.RULES,
              ValueRules.RULES,
              PodRules.RULES,
              PodGroupRules.RULES)
          .flatMap(List::stream)
          .toList();

  /** The words of the rule that refuses token passthrough under OIDC. */
  public static final String FORWARDING_REFUSED = FleetRules.FORWARDING_REFUSED;

  /** The words of the rule that asks token exchange for the agents' OIDC client. */
  public static final String EXCHANGE_NEEDS_CLIENT = FleetRules.EXCHANGE_NEEDS_CLIENT;

  /** The words of the rule that refuses an inline client secret. */
  public static final String INLINE_CLIENT_SECRET = ValueRules.INLINE_CLIENT_SECRET;

  private Rules() {}
}
