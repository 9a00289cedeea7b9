package ca.helu.pallas.api.validation;

import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.api.PodSettingsSpec;
import io.fabric8.kubernetes.api.model.Volume;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The rules of {@code spec.pod} and {@code agents[].pod} (docs/operator.md, "Pods where you want
 * them"): nothing the operator sets on its pods may be overridden. Each CRD message is worded from
 * the value as the check words it, so both refuse with the same text.
 */
final class PodRules {
  // no apostrophes: each reason is also a CEL string literal in a messageExpression
  private static final String LABEL_REASON = ": the operator selects its pods by this label";
  private static final String ANNOTATION_REASON = ": the operator sets it to roll the pods";
  private static final String ENV_REASON = ": names starting with PALLAS_ belong to the runtime";
  private static final String VOLUME_REASON =
      ": config, tmp, static-tokens and identity are volumes of the operator";
  private static final String MOUNT_REASON =
      ": it collides with a mount of the operator (/etc/pallas, /tmp,"
          + " /var/run/pallas/static-tokens, /var/run/pallas/identity)";

  private static final String RESERVED = PodSettingsSpec.RESERVED_ENV_PREFIX;
  private static final String CEL_LABELS = celList(PodSettingsSpec.RESERVED_LABELS.stream());
  private static final String CEL_HASH = "'" + PallasNames.CONFIG_HASH_ANNOTATION + "'";

  /** The mount path with one trailing '/', as {@link PodSettingsSpec#mountCollides} reads it. */
  private static final String CEL_MOUNT_PATH =
      "(self.mountPath.endsWith('/') ? self.mountPath : self.mountPath + '/')";

  /** The CEL form of {@link PodSettingsSpec#mountCollides}. */
  private static final String CEL_MOUNT_COLLIDES =
      "("
          + celList(PodSettingsSpec.READ_ONLY_MOUNTS.stream().map(m -> m + "/"))
          + ".exists(r, "
          + CEL_MOUNT_PATH
          + ".startsWith(r)) || "
          + celList(
              Stream.concat(
                      PodSettingsSpec.READ_ONLY_MOUNTS.stream(),
                      Stream.of(PodSettingsSpec.TMP_MOUNT))
                  .map(m -> m + "/"))
          + ".exists(r, r.startsWith("
          + CEL_MOUNT_PATH
          + ")))";

  private PodRules() {}

  static final List<Rule> RULES =
      List.of(
          Rule.on(PodSettingsSpec.class)
              .cel("!has(self.labels) || !" + CEL_LABELS + ".exists(k, k in self.labels)")
              .messageExpression(
                  "'may not set ' + "
                      + CEL_LABELS
                      + ".filter(k, k in self.labels)[0] + '"
                      + LABEL_REASON
                      + "'")
              .message("may not set the operator's own labels" + LABEL_REASON)
              .fieldPath(".labels")
              .example(
                  "{defaultModel: passthrough, agents: [{name: a}], pod: {labels:"
                      + " {app.kubernetes.io/instance: other}}}",
                  "spec.pod.labels")
              .check((pod, at, p) -> {
                if (pod.labels() != null) {
                  PodSettingsSpec.RESERVED_LABELS.stream()
                      .filter(pod.labels()::containsKey)
                      .findFirst()
                      .ifPresent(k -> p.add(at + ".labels", "may not set " + k + LABEL_REASON));
                }
              }),
          Rule.on(PodSettingsSpec.class)
              .cel("!has(self.annotations) || !(" + CEL_HASH + " in self.annotations)")
              .messageExpression("'may not set ' + " + CEL_HASH + " + '" + ANNOTATION_REASON + "'")
              .message("may not set the operator's own annotation" + ANNOTATION_REASON)
              .fieldPath(".annotations")
              .example(
                  "{defaultModel: passthrough, agents: [{name: a}], pod: {annotations:"
                      + " {pallas.helu.ca/config-hash: x}}}",
                  "spec.pod.annotations")
              .check((pod, at, p) -> {
                if (pod.annotations() != null
                    && pod.annotations().containsKey(PallasNames.CONFIG_HASH_ANNOTATION)) {
                  p.add(
                      at + ".annotations",
                      "may not set " + PallasNames.CONFIG_HASH_ANNOTATION + ANNOTATION_REASON);
                }
              }),
          Rule.on(PodSettingsSpec.class)
              .cel(
                  "!has(self.volumes) || !self.volumes.exists(v, has(v.name) && v.name in "
                      + celList(PodSettingsSpec.RESERVED_VOLUMES.stream())
                      + ")")
              .messageExpression(
                  "'may not name a volume ' + (" + celFirstVolume() + ") + '" + VOLUME_REASON + "'")
              .message("may not reuse the operator's volume names" + VOLUME_REASON)
              .fieldPath(".volumes")
              .example(
                  "{defaultModel: passthrough, agents: [{name: a}], pod: {volumes: [{name: tmp,"
                      + " emptyDir: {}}]}}",
                  "spec.pod.volumes")
              .check((pod, at, p) -> {
                if (pod.volumes() != null) {
                  pod.volumes().stream()
                      .map(Volume::getName)
                      // List.of's contains(null) throws: a volume without a name is the schema's
                      .filter(n -> n != null && PodSettingsSpec.RESERVED_VOLUMES.contains(n))
                      .findFirst()
                      .ifPresent(n ->
                          p.add(at + ".volumes", "may not name a volume " + n + VOLUME_REASON));
                }
              }),
          Rule.on(PodSettingsSpec.Env.class)
              .cel("!self.name.startsWith('" + RESERVED + "')")
              .messageExpression("'may not set ' + self.name + '" + ENV_REASON + "'")
              .message("may not set a variable named PALLAS_*" + ENV_REASON)
              .fieldPath(".name")
              .example(
                  "{defaultModel: passthrough, agents: [{name: a}], pod: {env: [{name:"
                      + " PALLAS_STORE_URL, value: x}]}}",
                  "spec.pod.env[0].name")
              .check((env, at, p) -> {
                if (env.name() != null && env.name().startsWith(RESERVED)) {
                  p.add(at + ".name", "may not set " + env.name() + ENV_REASON);
                }
              }),
          Rule.on(PodSettingsSpec.EnvFrom.class)
              .cel("!has(self.prefix) || !self.prefix.startsWith('" + RESERVED + "')")
              .messageExpression("'may not use the prefix ' + self.prefix + '" + ENV_REASON + "'")
              .message("may not use a prefix starting with PALLAS_" + ENV_REASON)
              .fieldPath(".prefix")
              .example(
                  "{defaultModel: passthrough, agents: [{name: a}], pod: {envFrom: [{prefix:"
                      + " PALLAS_X, configMapRef: {name: c}}]}}",
                  "spec.pod.envFrom[0].prefix")
              .check((from, at, p) -> {
                if (from.prefix() != null && from.prefix().startsWith(RESERVED)) {
                  p.add(at + ".prefix", "may not use the prefix " + from.prefix() + ENV_REASON);
                }
              }),
          Rule.on(PodSettingsSpec.Mount.class)
              .cel("!(" + CEL_MOUNT_COLLIDES + ")")
              .messageExpression("'may not mount at ' + self.mountPath + '" + MOUNT_REASON + "'")
              .message("may not mount at the operator's mount paths" + MOUNT_REASON)
              .fieldPath(".mountPath")
              .example(
                  "{defaultModel: passthrough, agents: [{name: a}], pod: {volumeMounts: [{name: v,"
                      + " mountPath: /etc/pallas/extra}]}}",
                  "spec.pod.volumeMounts[0].mountPath")
              .check((mount, at, p) -> {
                if (mount.mountPath() != null && PodSettingsSpec.mountCollides(mount.mountPath())) {
                  p.add(at + ".mountPath", "may not mount at " + mount.mountPath() + MOUNT_REASON);
                }
              }));

  private static String celList(Stream<String> items) {
    return items.map(i -> "'" + i + "'").collect(Collectors.joining(", ", "[", "]"));
  }

  /** The first of the operator's volume names the pod uses, in the operator's order. */
  private static String celFirstVolume() {
    List<String> names = PodSettingsSpec.RESERVED_VOLUMES;
    StringBuilder out = new StringBuilder();
    for (String name : names.subList(0, names.size() - 1)) {
      out.append("self.volumes.exists(v, has(v.name) && v.name == '")
          .append(name)
          .append("') ? '")
          .append(name)
          .append("' : ");
    }
    return out.append("'").append(names.get(names.size() - 1)).append("'").toString();
  }
}
