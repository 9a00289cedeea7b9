package ca.helu.pallas.api;

import ca.helu.pallas.api.validation.Formats;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.kubernetes.api.model.Affinity;
import io.fabric8.kubernetes.api.model.ConfigMapEnvSource;
import io.fabric8.kubernetes.api.model.EnvFromSource;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarSource;
import io.fabric8.kubernetes.api.model.SecretEnvSource;
import io.fabric8.kubernetes.api.model.Toleration;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraint;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * Where a fleet's pods run and what they carry beyond what the operator renders (Kubernetes): the
 * fleet-wide {@code spec.pod} and an agent's own {@code agents[].pod}, which replaces it field by
 * field (docs/operator.md, "Pods where you want them"). What it may not override is declared in the
 * validation package's PodRules.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record PodSettingsSpec(
    @JsonPropertyDescription(
            "Node labels a pod's node must have (the pod's nodeSelector). Default: any node.")
        Map<String, String> nodeSelector,
    @JsonPropertyDescription("Taints the pods tolerate (the pod's tolerations).")
        @Size(max = MAX_ENTRIES)
        List<Toleration> tolerations,
    @JsonPropertyDescription("Node and pod affinity and anti-affinity (the pod's affinity).")
        Affinity affinity,
    @JsonPropertyDescription(
            "How the pods spread over the topology; replaces the operator's default (an agent's"
                + " pods spread over nodes, then zones, ScheduleAnyway).")
        @Size(max = MAX_ENTRIES)
        List<TopologySpreadConstraint> topologySpreadConstraints,
    @JsonPropertyDescription("The pods' PriorityClass. Default: the cluster's default priority.")
        @Pattern(Formats.DNS_SUBDOMAIN)
        @Size(max = 253)
        String priorityClassName,
    @JsonPropertyDescription(
            "Extra labels on the pods. The operator's own (app.kubernetes.io/name, instance,"
                + " component, managed-by, pallas.helu.ca/agent and pallas.helu.ca/pod-group) may not be"
                + " set.")
        Map<String, String> labels,
    @JsonPropertyDescription(
            "Extra annotations on the pods. pallas.helu.ca/config-hash, the operator's, may not be"
                + " set.")
        Map<String, String> annotations,
    @JsonPropertyDescription(
            "Extra environment variables of the container: a value, or valueFrom a ConfigMap or"
                + " Secret key (read by the kubelet; the operator never reads the values). Names"
                + " starting with PALLAS_ are the runtime's own and may not be set.")
        @Size(max = MAX_ENV)
        List<Env> env,
    @JsonPropertyDescription(
            "Whole ConfigMaps or Secrets as environment variables of the container. A prefix may"
                + " not start with PALLAS_; the operator's own variables take precedence over"
                + " these (Kubernetes: env wins over envFrom).")
        @Size(max = MAX_ENTRIES)
        List<EnvFrom> envFrom,
    @JsonPropertyDescription(
            "Extra volumes of the pod; the operator's own names (config, tmp, static-tokens) may"
                + " not be used.")
        @Size(max = MAX_ENTRIES)
        List<Volume> volumes,
    @JsonPropertyDescription(
            "Where the container mounts them. Not at, inside or above /etc/pallas or"
                + " /var/run/pallas/static-tokens, nor at or above /tmp (the operator's mounts);"
                + " inside /tmp is allowed.")
        @Size(max = MAX_ENTRIES)
        List<Mount> volumeMounts,
    @JsonPropertyDescription(
            "The pods' ServiceAccount (agents only: the registry keeps its own, which may read the"
                + " fleet's ConfigMap). Its token is not mounted unless a volume asks for it."
                + " Default: the namespace's default.")
        @Pattern(Formats.DNS_SUBDOMAIN)
        @Size(max = 253)
        String serviceAccountName,
    @JsonPropertyDescription(
            "A fixed user and groups for the pods. Default: none, so the image's user (65532) runs"
                + " them, or the one the platform assigns (OpenShift's restricted-v2 SCC: a UID"
                + " from the namespace's range, in group 0). The rest of the pods' security"
                + " context is the operator's: non-root, seccomp RuntimeDefault, no privilege"
                + " escalation, no capabilities.")
        PodSecurity securityContext) {

  /**
   * The pods' user and groups where the cluster wants fixed ones (docs/install.md, "OpenShift");
   * without them the image's user runs the pods, or the platform's.
   */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record PodSecurity(
      @JsonPropertyDescription("The UID the containers run as (runAsUser); not 0 (root).")
          @Min(1)
          @Max(MAX_ID)
          Long runAsUser,
      @JsonPropertyDescription(
              "Their primary GID (runAsGroup). Default: the user's group in the image, or 0 for a"
                  + " UID the image does not know; the images' files are readable in group 0.")
          @Min(0)
          @Max(MAX_ID)
          Long runAsGroup,
      @JsonPropertyDescription(
              "A supplementary GID of the containers that owns the pods' volumes (fsGroup).")
          @Min(0)
          @Max(MAX_ID)
          Long fsGroup) {}

  /** The largest UID or GID Kubernetes accepts. */
  public static final long MAX_ID = Integer.MAX_VALUE;

  /**
   * A container's environment variable: Kubernetes' EnvVar with a bounded name, so the CRD's rules
   * on names fit the API server's CEL cost budget.
   */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record Env(
      @JsonPropertyDescription("The variable's name.") @Required @Size(max = MAX_NAME) String name,
      @JsonPropertyDescription("Its value.") String value,
      @JsonPropertyDescription(
              "Or its value from a ConfigMap or Secret key, or a field of the pod.")
          EnvVarSource valueFrom) {
    public EnvVar toEnvVar() {
      return new EnvVar(name, value, valueFrom);
    }
  }

  /** Kubernetes' EnvFromSource with a bounded prefix (see {@link Env}). */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record EnvFrom(
      @JsonPropertyDescription("Prefixed to every key's variable name.") @Size(max = MAX_NAME)
          String prefix,
      @JsonPropertyDescription("A ConfigMap's keys as variables.") ConfigMapEnvSource configMapRef,
      @JsonPropertyDescription("A Secret's keys as variables.") SecretEnvSource secretRef) {
    public EnvFromSource toEnvFromSource() {
      return new EnvFromSource(configMapRef, prefix, secretRef);
    }
  }

  /** Kubernetes' VolumeMount with a bounded mountPath (see {@link Env}). */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record Mount(
      @JsonPropertyDescription("The volume's name (of volumes).") @Required @Size(max = MAX_NAME)
          String name,
      @JsonPropertyDescription("Where in the container.") @Required @Size(max = MAX_PATH)
          String mountPath,
      @JsonPropertyDescription("Read-only. Default false.") Boolean readOnly,
      @JsonPropertyDescription("Recursively read-only: Disabled, IfPossible or Enabled.")
          String recursiveReadOnly,
      @JsonPropertyDescription("A path inside the volume to mount instead of its root.")
          String subPath,
      @JsonPropertyDescription("subPath with $(VAR) expanded from the container's environment.")
          String subPathExpr,
      @JsonPropertyDescription("None, HostToContainer or Bidirectional.") String mountPropagation) {
    public VolumeMount toVolumeMount() {
      return new VolumeMount(
          mountPath, mountPropagation, name, readOnly, recursiveReadOnly, subPath, subPathExpr);
    }
  }

  public static final int MAX_NAME = 253;
  public static final int MAX_PATH = 1024;

  /** Entries of each list; bounds keep the CEL rules within the API server's cost budget. */
  public static final int MAX_ENTRIES = 32;

  public static final int MAX_ENV = 128;

  public static final String RESERVED_ENV_PREFIX = "PALLAS_";

  /** Labels the operator selects and groups its pods by. */
  public static final List<String> RESERVED_LABELS =
      List.of(
          PallasNames.LABEL_NAME,
          PallasNames.LABEL_INSTANCE,
          PallasNames.LABEL_COMPONENT,
          PallasNames.LABEL_MANAGED_BY,
          PallasNames.LABEL_AGENT,
          PallasNames.LABEL_POD_GROUP);

  public static final List<String> RESERVED_VOLUMES =
      List.of(
          PallasNames.CONFIG_VOLUME,
          PallasNames.TMP_VOLUME,
          PallasNames.TOKENS_VOLUME,
          PallasNames.IDENTITY_VOLUME);

  /** The operator's read-only mounts: nothing may be mounted at, inside or above them. */
  public static final List<String> READ_ONLY_MOUNTS =
      List.of(PallasNames.CONFIG_DIR, PallasNames.STATIC_TOKENS_DIR, PallasNames.IDENTITY_DIR);

  /** The operator's writable mount: a volume may be mounted inside it, not at or above it. */
  public static final String TMP_MOUNT = PallasNames.TMP_DIR;

  /** Whether a container mount path collides with one of the operator's mounts (see above). */
  public static boolean mountCollides(String mountPath) {
    String path = mountPath.endsWith("/") ? mountPath : mountPath + "/";
    return READ_ONLY_MOUNTS.stream().anyMatch(r -> path.startsWith(r + "/"))
        || Stream.concat(READ_ONLY_MOUNTS.stream(), Stream.of(TMP_MOUNT))
            .anyMatch(r -> (r + "/").startsWith(path));
  }

  /** The agent's settings over the fleet's, field by field (a field the agent sets wins whole). */
  public static PodSettingsSpec merge(PodSettingsSpec fleet, PodSettingsSpec agent) {
    if (agent == null) {
      return fleet == null ? EMPTY : fleet;
    }
    if (fleet == null) {
      return agent;
    }
    return new PodSettingsSpec(
        or(agent, fleet, PodSettingsSpec::nodeSelector),
        or(agent, fleet, PodSettingsSpec::tolerations),
        or(agent, fleet, PodSettingsSpec::affinity),
        or(agent, fleet, PodSettingsSpec::topologySpreadConstraints),
        or(agent, fleet, PodSettingsSpec::priorityClassName),
        or(agent, fleet, PodSettingsSpec::labels),
        or(agent, fleet, PodSettingsSpec::annotations),
        or(agent, fleet, PodSettingsSpec::env),
        or(agent, fleet, PodSettingsSpec::envFrom),
        or(agent, fleet, PodSettingsSpec::volumes),
        or(agent, fleet, PodSettingsSpec::volumeMounts),
        or(agent, fleet, PodSettingsSpec::serviceAccountName),
        or(agent, fleet, PodSettingsSpec::securityContext));
  }

  public static final PodSettingsSpec EMPTY =
      new PodSettingsSpec(
          null, null, null, null, null, null, null, null, null, null, null, null, null);

  private static <T> T or(
      PodSettingsSpec agent, PodSettingsSpec fleet, Function<PodSettingsSpec, T> field) {
    T own = field.apply(agent);
    return own != null ? own : field.apply(fleet);
  }
}
