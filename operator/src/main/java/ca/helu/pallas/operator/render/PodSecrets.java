package ca.helu.pallas.operator.render;

import ca.helu.pallas.api.SecretValue.SecretKeyRef;
import ca.helu.pallas.api.SecretVariables;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What one pod gets from Secrets: a variable per Secret key, which the kubelet fills by {@code
 * secretKeyRef} (a value never passes through the operator's objects), and the digest of each
 * value, so that the pod rolls when one changes: it reads its environment once. A Secret or key
 * that does not exist is reported, naming the field that uses it.
 */
final class PodSecrets {
  /**
   * Where the values are found.
   *
   * @param inlineSecret the fleet's own Secret {@code X-inline}, whose values are {@code inline}
   * @param inline the inline values moved into it, by key
   * @param digests the digests of the other Secrets' keys
   * @param missing where a missing Secret or key is reported
   */
  record Source(
      String inlineSecret,
      Map<String, String> inline,
      SecretDigests digests,
      List<String> missing) {}

  private final Source source;
  private final Map<String, EnvVar> env = new TreeMap<>();
  private final Map<String, String> digests = new TreeMap<>();

  PodSecrets(Source source) {
    this.source = source;
  }

  /** Each key under the variable {@link SecretVariables} names for it. */
  void keys(List<SecretRef> refs) {
    refs.forEach(r -> key(SecretVariables.nameFor(r.ref()), r.ref(), r.field()));
  }

  /** The key {@code ref}, used by {@code field}, as the variable {@code variable}. */
  void key(String variable, SecretKeyRef ref, String field) {
    env.put(
        variable,
        new EnvVarBuilder()
            .withName(variable)
            .withNewValueFrom()
            .withNewSecretKeyRef(ref.key(), ref.name(), false)
            .endValueFrom()
            .build());
    digestOf(ref, field).ifPresent(d -> digests.put(variable, d));
  }

  /** A variable that holds no secret (the directory a Secret is mounted at). */
  void value(String variable, String value) {
    env.put(variable, new EnvVarBuilder().withName(variable).withValue(value).build());
  }

  /**
   * A Secret the pod mounts whole, one caller's token per key: the digest of every key, so a new,
   * changed or removed token rolls the pod.
   */
  void tokens(String secret, String field) {
    Optional<Map<String, String>> keys = source.digests().of(secret);
    if (keys.isEmpty()) {
      source.missing().add(field + ": Secret '" + secret + "' does not exist");
    } else if (keys.get().isEmpty()) {
      source.missing().add(field + ": Secret '" + secret + "' holds no token");
    } else {
      keys.get().forEach((caller, digest) -> digests.put("static-token " + caller, digest));
    }
  }

  List<EnvVar> env() {
    return List.copyOf(env.values());
  }

  /** The digests of the values, by variable (or {@code static-token <caller>}). */
  Map<String, String> digests() {
    return digests;
  }

  private Optional<String> digestOf(SecretKeyRef ref, String field) {
    if (ref.name().equals(source.inlineSecret())) {
      return Optional.ofNullable(source.inline().get(ref.key())).map(FleetRenderer::sha256);
    }
    Optional<Map<String, String>> keys = source.digests().of(ref.name());
    if (keys.isEmpty()) {
      source.missing().add(field + ": Secret '" + ref.name() + "' does not exist");
      return Optional.empty();
    }
    String digest = keys.get().get(ref.key());
    if (digest == null) {
      source.missing().add(field + ": Secret '" + ref.name() + "' has no key '" + ref.key() + "'");
      return Optional.empty();
    }
    return Optional.of(digest);
  }
}
