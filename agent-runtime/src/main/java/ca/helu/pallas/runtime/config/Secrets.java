package ca.helu.pallas.runtime.config;

import ca.helu.pallas.api.SecretValue;
import ca.helu.pallas.api.SecretVariables;
import java.util.Optional;

/**
 * Resolves {@link SecretValue}s. A {@code secretKeyRef} is read from the environment variable the
 * operator injects for it ({@link SecretVariables}); error messages name the variable, never a
 * value.
 */
public final class Secrets {
  private final Environment env;

  public Secrets(Environment env) {
    this.env = env;
  }

  /** The secret's value, or empty when the variable it names is unset. */
  public Optional<String> resolve(SecretValue secret) {
    if (secret == null) {
      return Optional.empty();
    }
    if (secret.value() != null) {
      return Optional.of(secret.value());
    }
    if (secret.env() != null) {
      return env.get(secret.env());
    }
    return env.get(SecretVariables.nameFor(secret.secretKeyRef()));
  }

  /** Where the secret comes from, for messages: never the value itself. */
  public static String describe(SecretValue secret) {
    if (secret == null) {
      return "(none)";
    }
    if (secret.value() != null) {
      return "an inline value";
    }
    if (secret.env() != null) {
      return "environment variable " + secret.env();
    }
    return "Secret "
        + secret.secretKeyRef().name()
        + " key "
        + secret.secretKeyRef().key()
        + " (environment variable "
        + SecretVariables.nameFor(secret.secretKeyRef())
        + ")";
  }

  public Environment environment() {
    return env;
  }
}
