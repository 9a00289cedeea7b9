package ca.helu.pallas.api.validation;

import java.util.Objects;
import java.util.function.Predicate;

/**
 * One rule of the manifest, declared once: the CEL rule the CRD carries on the schema of {@link
 * #on} (or of its field {@link #property}), which the API server checks, and the same rule as a
 * check of a parsed manifest, which {@code serve} and the operator make ({@link Validator}). The
 * CRD's message names the rule; the check's names the entry and the value.
 *
 * @param on the type whose schema carries the rule
 * @param property a field of {@code on} whose schema carries it (its value is CEL's {@code self}),
 *     or null: the object's own
 * @param fieldPath where the API server reports it, relative to {@code self} ({@code .agents}), or
 *     null: at {@code self}
 * @param messageExpression the CRD's message worded from the value, or null: {@code message}
 * @param example a manifest that breaks the rule (CelRulesIT sends it to a real API server)
 */
public record Rule(
    Class<?> on,
    String property,
    String cel,
    String message,
    String messageExpression,
    String fieldPath,
    Check<Object> check,
    Example example) {

  /** The rule on a parsed manifest: adds a problem for each place {@code self} breaks it. */
  @FunctionalInterface
  public interface Check<T> {
    void check(T self, String at, Problems problems);
  }

  /**
   * A manifest that breaks the rule: {@code spec} (YAML) under {@code metadata.name: name}, and the
   * field both the API server and the validator name.
   */
  public record Example(String name, String spec, String field) {}

  public Rule {
    Objects.requireNonNull(on);
    Objects.requireNonNull(cel);
    Objects.requireNonNull(message);
    Objects.requireNonNull(check);
    Objects.requireNonNull(example, () -> "a rule on " + on.getSimpleName() + " needs an example");
  }

  /** A rule on the objects of type {@code type}. */
  public static <T> Builder<T> on(Class<T> type) {
    return new Builder<>(type, null);
  }

  /** A rule on one string field of {@code type}; checked only where the field is set, as in CEL. */
  public static Builder<String> onField(Class<?> type, String property) {
    return new Builder<>(type, property);
  }

  /** Declares a rule: its CEL, message and example, then its check. */
  public static final class Builder<T> {
    private final Class<?> on;
    private final String property;
    private String cel;
    private String message;
    private String messageExpression;
    private String fieldPath;
    private Example example;

    private Builder(Class<?> on, String property) {
      this.on = on;
      this.property = property;
    }

    public Builder<T> cel(String cel) {
      this.cel = cel;
      return this;
    }

    public Builder<T> message(String message) {
      this.message = message;
      return this;
    }

    public Builder<T> messageExpression(String messageExpression) {
      this.messageExpression = messageExpression;
      return this;
    }

    public Builder<T> fieldPath(String fieldPath) {
      this.fieldPath = fieldPath;
      return this;
    }

    /** A spec that breaks the rule, under a fleet named {@code fleet}. */
    public Builder<T> example(String spec, String field) {
      return example("fleet", spec, field);
    }

    public Builder<T> example(String name, String spec, String field) {
      this.example = new Example(name, spec, field);
      return this;
    }

    /** The rule, checked by {@code check}. */
    @SuppressWarnings("unchecked")
    public Rule check(Check<T> check) {
      return new Rule(
          on, property, cel, message, messageExpression, fieldPath, (Check<Object>) check, example);
    }

    /** The rule, broken where {@code holds} is false; the problem is the CRD's message. */
    public Rule holds(Predicate<T> holds) {
      String relative = fieldPath == null ? "" : fieldPath;
      String words = message;
      return check((self, at, p) -> {
        if (!holds.test(self)) {
          p.add(at + relative, words);
        }
      });
    }
  }
}
