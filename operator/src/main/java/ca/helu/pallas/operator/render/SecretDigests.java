package ca.helu.pallas.operator.render;

import java.util.Map;
import java.util.Optional;

/**
 * What the operator knows of the Secrets a deployment references: per key a digest of the value,
 * never the value (docs/operator.md).
 */
@FunctionalInterface
public interface SecretDigests {
  /** The Secret's keys with a digest of each value, or empty when the Secret does not exist. */
  Optional<Map<String, String>> of(String secretName);

  SecretDigests NONE = name -> Optional.empty();
}
