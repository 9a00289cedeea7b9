package ca.helu.pallas.operator.dependent;

import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.AuthSpec;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.api.PodSettingsSpec;
import ca.helu.pallas.operator.OperatorConfig;
import ca.helu.pallas.operator.render.FleetPod;
import ca.helu.pallas.operator.render.RenderedAgent;
import ca.helu.pallas.operator.render.RenderedFleet;
import io.fabric8.kubernetes.api.model.Capabilities;
import io.fabric8.kubernetes.api.model.CapabilitiesBuilder;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.ContainerPortBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LocalObjectReference;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSecurityContextBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.ProbeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.SecurityContextBuilder;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraint;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraintBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import io.fabric8.kubernetes.api.model.VolumeProjection;
import io.fabric8.kubernetes.api.model.VolumeProjectionBuilder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * What every pod the operator renders has in common: Pod Security "restricted" (non-root, no
 * privilege escalation, no capabilities, seccomp RuntimeDefault, read-only root filesystem with a
 * writable /tmp), probes on /livez and /readyz, and the mounted manifest (docs/operator.md). No
 * user or group unless the spec asks for one: the image's runs the pods, or the one the platform
 * assigns (OpenShift's restricted-v2 SCC, docs/install.md). The registry is probed on its serving
 * port, an agent on a probe port of its own.
 */
final class Pods {
  /** Seconds between the pod leaving its Service's endpoints and SIGTERM. */
  static final int PRE_STOP_SECONDS = 5;

  static final String HOSTNAME_TOPOLOGY = "kubernetes.io/hostname";
  static final String ZONE_TOPOLOGY = "topology.kubernetes.io/zone";

  static final String CONFIG_VOLUME = PallasNames.CONFIG_VOLUME;
  static final String TMP_VOLUME = PallasNames.TMP_VOLUME;
  static final String TOKENS_VOLUME = PallasNames.TOKENS_VOLUME;

  /** The ConfigMap every namespace has with the API server's CA (kube-root-ca.crt). */
  static final String KUBE_ROOT_CA = "kube-root-ca.crt";

  /**
   * Lifetime of a projected token: the kubelet replaces it after 80 % of this, and the runtime
   * reads it at every use.
   */
  static final long TOKEN_SECONDS = 3600;

  private Pods() {}

  static PodSecurityContext podSecurity() {
    return new PodSecurityContextBuilder()
        .withRunAsNonRoot(true)
        .withNewSeccompProfile()
        .withType("RuntimeDefault")
        .endSeccompProfile()
        .build();
  }

  /** The Secrets the runtime image is pulled with (chart value runtimeImage.pullSecrets). */
  static List<LocalObjectReference> pullSecrets(OperatorConfig config) {
    return config.imagePullSecrets().stream().map(LocalObjectReference::new).toList();
  }

  static SecurityContext containerSecurity() {
    Capabilities none = new CapabilitiesBuilder().withDrop("ALL").build();
    return new SecurityContextBuilder()
        .withAllowPrivilegeEscalation(false)
        .withReadOnlyRootFilesystem(true)
        .withRunAsNonRoot(true)
        .withCapabilities(none)
        .build();
  }

  static List<ContainerPort> port(int port) {
    return List.of(containerPort(PallasNames.PORT_NAME, port));
  }

  /**
   * The MCP port of each of a pod's agents and its probe port: an agent's own pod names its port
   * {@code http}; a pod group's name each {@link #groupPortName}, since one container's port names
   * are unique and at most 15 characters, which agent names are not.
   */
  static List<ContainerPort> agentPorts(FleetPod pod) {
    List<ContainerPort> ports = new ArrayList<>();
    for (RenderedAgent agent : pod.agents()) {
      ports.add(
          containerPort(
              pod.grouped() ? groupPortName(agent.port()) : PallasNames.PORT_NAME, agent.port()));
    }
    ports.add(containerPort(PallasNames.PROBE_PORT_NAME, pod.probePort()));
    return ports;
  }

  /** The container port name of an agent's MCP port in a pod group's pod, e.g. mcp-24201. */
  static String groupPortName(int port) {
    return "mcp-" + port;
  }

  private static ContainerPort containerPort(String name, int port) {
    return new ContainerPortBuilder()
        .withName(name)
        .withContainerPort(port)
        .withProtocol("TCP")
        .build();
  }

  /** Ready while the endpoint serves and the pod is not draining; probed on the named port. */
  static Probe readiness(String port) {
    return httpProbe(port, "/readyz", 2, 1);
  }

  /** Restarts a process that stopped answering. */
  static Probe liveness(String port) {
    return httpProbe(port, "/livez", 10, 3);
  }

  /** Gives a slow JVM start (a busy node) two minutes before liveness applies. */
  static Probe startup(String port) {
    return httpProbe(port, "/livez", 1, 120);
  }

  private static Probe httpProbe(
      String port, String path, int periodSeconds, int failureThreshold) {
    return new ProbeBuilder()
        .withNewHttpGet()
        .withPath(path)
        .withPort(new IntOrString(port))
        .endHttpGet()
        .withPeriodSeconds(periodSeconds)
        .withFailureThreshold(failureThreshold)
        .withTimeoutSeconds(2)
        .build();
  }

  /**
   * An agent's pods spread over nodes, then zones, as evenly as the scheduler can (ScheduleAnyway:
   * a cluster of one node or zone still schedules them), so one node or zone lost takes only its
   * share of the replicas. Counted per ReplicaSet (pod-template-hash): during a rollout the new
   * pods spread among themselves instead of around the old ones.
   */
  static List<TopologySpreadConstraint> spread(Map<String, String> selector) {
    return Stream.of(HOSTNAME_TOPOLOGY, ZONE_TOPOLOGY)
        .map(key ->
            new TopologySpreadConstraintBuilder()
                .withTopologyKey(key)
                .withMaxSkew(1)
                .withWhenUnsatisfiable("ScheduleAnyway")
                .withNewLabelSelector()
                .withMatchLabels(selector)
                .endLabelSelector()
                .withMatchLabelKeys("pod-template-hash")
                .build())
        .toList();
  }

  static List<Volume> volumes(String deployment) {
    return List.of(
        new VolumeBuilder()
            .withName(CONFIG_VOLUME)
            .withNewConfigMap()
            .withName(PallasNames.configMap(deployment))
            .endConfigMap()
            .build(),
        new VolumeBuilder()
            .withName(TMP_VOLUME)
            .withNewEmptyDir()
            .withSizeLimit(new Quantity("64Mi"))
            .endEmptyDir()
            .build());
  }

  /**
   * An agent pod's volumes: {@link #volumes}, the Secret of its static tokens if any, and with
   * {@code spec.auth} its identity ({@link #identity}).
   */
  static List<Volume> agentVolumes(RenderedFleet fleet, FleetPod pod) {
    List<Volume> volumes = new ArrayList<>(volumes(fleet.name()));
    if (fleet.primary().getSpec().auth() != null) {
      List<AgentSpec> peers =
          pod.agents().stream()
              .flatMap(a -> a.agent().effectiveServers().stream())
              .distinct()
              .flatMap(s -> fleet.primary().getSpec().agent(s).stream())
              .toList();
      volumes.add(identity(fleet.primary(), peers, true));
    }
    tokensVolume(fleet).ifPresent(volumes::add);
    return volumes;
  }

  /**
   * A pod's identity with {@code spec.auth} (docs/runtime.md, "Agents calling agents"): its
   * ServiceAccount's tokens as the kubelet projects and rotates them, one for each agent it calls
   * ({@code peers}) with that agent's resource identifier as audience, and for an agent pod, which
   * checks the tokens of the agents that call it, one for the API server (whose keys it reads),
   * with the API server's CA.
   */
  static Volume identity(PallasDeployment primary, List<AgentSpec> peers, boolean checksTokens) {
    List<VolumeProjection> sources = new ArrayList<>();
    if (checksTokens) {
      sources.add(
          new VolumeProjectionBuilder()
              .withNewServiceAccountToken()
              .withPath(PallasNames.API_TOKEN_FILE)
              .withExpirationSeconds(TOKEN_SECONDS)
              .endServiceAccountToken()
              .build());
      sources.add(
          new VolumeProjectionBuilder()
              .withNewConfigMap()
              .withName(KUBE_ROOT_CA)
              .addNewItem()
              .withKey("ca.crt")
              .withPath(PallasNames.API_CA_FILE)
              .endItem()
              .endConfigMap()
              .build());
    }
    for (AgentSpec peer : peers) {
      sources.add(
          new VolumeProjectionBuilder()
              .withNewServiceAccountToken()
              .withPath(PallasNames.peerTokenFile(peer.name()))
              .withAudience(PallasNames.agentUrl(primary, peer))
              .withExpirationSeconds(TOKEN_SECONDS)
              .endServiceAccountToken()
              .build());
    }
    return new VolumeBuilder()
        .withName(PallasNames.IDENTITY_VOLUME)
        .withNewProjected()
        // read by the runtime's user, which the pod sets and no fsGroup maps
        .withDefaultMode(0444)
        .withSources(sources)
        .endProjected()
        .build();
  }

  /** An agent container's mounts: {@link #mounts}, its static tokens and identity read-only. */
  static List<VolumeMount> agentMounts(RenderedFleet fleet) {
    List<VolumeMount> mounts = new ArrayList<>(mounts());
    identityMount(fleet).ifPresent(mounts::add);
    tokensMount(fleet).ifPresent(mounts::add);
    return mounts;
  }

  /**
   * The registry pod's volumes: its temporary directory, the Secret of the static tokens if any,
   * which its /mcp asks for as the agents do (docs/runtime.md, "The registry's MCP endpoint"), and
   * with {@code spec.auth} its identity for every agent it follows.
   */
  static List<Volume> registryVolumes(RenderedFleet fleet) {
    List<Volume> volumes = new ArrayList<>(List.of(volumes(fleet.name()).get(1)));
    tokensVolume(fleet).ifPresent(volumes::add);
    if (fleet.primary().getSpec().auth() != null) {
      volumes.add(identity(fleet.primary(), fleet.primary().getSpec().effectiveAgents(), false));
    }
    return volumes;
  }

  /** The registry container's mounts: its temporary directory, the static tokens, its identity. */
  static List<VolumeMount> registryMounts(RenderedFleet fleet) {
    List<VolumeMount> mounts = new ArrayList<>(List.of(mounts().get(1)));
    tokensMount(fleet).ifPresent(mounts::add);
    identityMount(fleet).ifPresent(mounts::add);
    return mounts;
  }

  /**
   * The registry container's environment: what FleetRenderer gives its pod (its servers' header
   * keys, the static tokens' directory) and, with {@code spec.auth}, where its identity is, which
   * it presents to the agents it follows (docs/runtime.md, "Agents calling agents").
   */
  static List<EnvVar> registryEnv(RenderedFleet fleet) {
    if (fleet.primary().getSpec().auth() == null) {
      return fleet.registry().env();
    }
    List<EnvVar> env = new ArrayList<>(fleet.registry().env());
    env.add(new EnvVar(IDENTITY_VARIABLE, PallasNames.IDENTITY_DIR, null));
    return env;
  }

  /** The runtime's variable naming where a pod's identity is (agent-runtime serve.PodIdentity). */
  static final String IDENTITY_VARIABLE = "PALLAS_IDENTITY_DIR";

  private static Optional<VolumeMount> identityMount(RenderedFleet fleet) {
    return fleet.primary().getSpec().auth() == null
        ? Optional.empty()
        : Optional.of(
            new VolumeMountBuilder()
                .withName(PallasNames.IDENTITY_VOLUME)
                .withMountPath(PallasNames.IDENTITY_DIR)
                .withReadOnly(true)
                .build());
  }

  private static Optional<Volume> tokensVolume(RenderedFleet fleet) {
    return staticTokens(fleet)
        .map(secret ->
            new VolumeBuilder()
                .withName(TOKENS_VOLUME)
                .withNewSecret()
                .withSecretName(secret)
                // read by whatever user runs the pod (the image's, the platform's)
                .withDefaultMode(0444)
                .endSecret()
                .build());
  }

  private static Optional<VolumeMount> tokensMount(RenderedFleet fleet) {
    return staticTokens(fleet)
        .map(secret ->
            new VolumeMountBuilder()
                .withName(TOKENS_VOLUME)
                .withMountPath(PallasNames.STATIC_TOKENS_DIR)
                .withReadOnly(true)
                .build());
  }

  private static Optional<String> staticTokens(RenderedFleet fleet) {
    AuthSpec auth = fleet.primary().getSpec().auth();
    return auth == null || auth.staticTokens() == null
        ? Optional.empty()
        : Optional.of(auth.staticTokens().secretName());
  }

  static List<VolumeMount> mounts() {
    return List.of(
        new VolumeMountBuilder()
            .withName(CONFIG_VOLUME)
            .withMountPath(PallasNames.CONFIG_DIR)
            .withReadOnly(true)
            .build(),
        new VolumeMountBuilder().withName(TMP_VOLUME).withMountPath(PallasNames.TMP_DIR).build());
  }

  /**
   * A rendered pod template with the user's settings added (docs/operator.md, "Pods where you want
   * them"): their labels, annotations, env, volumes and mounts beside the operator's own, which
   * validation keeps them from replacing; their topologySpreadConstraints instead of the default
   * spread; their user and groups in the operator's pod security context. The registry keeps its
   * own ServiceAccount, the one its Role is bound to.
   */
  static PodTemplateSpec withSettings(
      PodTemplateSpec rendered, PodSettingsSpec settings, boolean ownServiceAccount) {
    // a deep copy: the user's objects in the spec are never shared with the rendered Deployment
    PodTemplateSpec template = new PodTemplateSpecBuilder(rendered).build();
    ObjectMeta metadata = template.getMetadata();
    Map<String, String> labels = new LinkedHashMap<>(orEmpty(settings.labels()));
    labels.putAll(orEmpty(metadata.getLabels()));
    metadata.setLabels(labels);
    Map<String, String> annotations = new LinkedHashMap<>(orEmpty(settings.annotations()));
    annotations.putAll(orEmpty(metadata.getAnnotations()));
    metadata.setAnnotations(annotations);
    PodSpec spec = template.getSpec();
    Container container = spec.getContainers().get(0);
    container.setEnv(concat(container.getEnv(), settings.env(), PodSettingsSpec.Env::toEnvVar));
    container.setEnvFrom(
        concat(
            container.getEnvFrom(), settings.envFrom(), PodSettingsSpec.EnvFrom::toEnvFromSource));
    container.setVolumeMounts(
        concat(
            container.getVolumeMounts(),
            settings.volumeMounts(),
            PodSettingsSpec.Mount::toVolumeMount));
    spec.setVolumes(concat(spec.getVolumes(), settings.volumes(), v -> v));
    if (settings.nodeSelector() != null) {
      spec.setNodeSelector(new LinkedHashMap<>(settings.nodeSelector()));
    }
    if (settings.tolerations() != null) {
      spec.setTolerations(settings.tolerations());
    }
    if (settings.affinity() != null) {
      spec.setAffinity(settings.affinity());
    }
    if (settings.topologySpreadConstraints() != null) {
      spec.setTopologySpreadConstraints(settings.topologySpreadConstraints());
    }
    if (settings.priorityClassName() != null) {
      spec.setPriorityClassName(settings.priorityClassName());
    }
    if (settings.serviceAccountName() != null && !ownServiceAccount) {
      spec.setServiceAccountName(settings.serviceAccountName());
    }
    PodSettingsSpec.PodSecurity security = settings.securityContext();
    if (security != null) {
      PodSecurityContext context = spec.getSecurityContext();
      context.setRunAsUser(security.runAsUser());
      context.setRunAsGroup(security.runAsGroup());
      context.setFsGroup(security.fsGroup());
    }
    // copied once more, so the result holds none of the spec's objects
    return new PodTemplateSpecBuilder(template).build();
  }

  private static <T, S> List<T> concat(List<T> own, List<S> extra, Function<S, T> toKubernetes) {
    List<T> all = new ArrayList<>(own == null ? List.of() : own);
    if (extra != null) {
      extra.stream().map(toKubernetes).forEach(all::add);
    }
    return all;
  }

  private static <K, V> Map<K, V> orEmpty(Map<K, V> map) {
    return map == null ? Map.of() : map;
  }

  /** The spec's resources, or requests of 100m CPU and 256Mi with a 512Mi memory limit. */
  static ResourceRequirements resources(ResourceRequirements fromSpec) {
    if (fromSpec != null) {
      return fromSpec;
    }
    return new ResourceRequirementsBuilder()
        .addToRequests("cpu", new Quantity("100m"))
        .addToRequests("memory", new Quantity("256Mi"))
        .addToLimits("memory", new Quantity("512Mi"))
        .build();
  }
}
