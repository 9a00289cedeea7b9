package ca.helu.pallas.api;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Every name the operator and the runtime must agree on (docs/operator.md): object names, labels,
 * ports, mount paths and in-cluster URLs. For PallasDeployment {@code X} in namespace {@code N}:
 * agent {@code a} runs as Deployment and Service {@code X-a} ({@code _} becomes {@code -}), the
 * registry as {@code X-registry}, the rendered manifest is ConfigMap {@code X-config}.
 */
public final class PallasNames {
  /** Agent and server names: DNS-friendly, '_' allowed (tech_research). */
  public static final String NAME_PATTERN = "^[a-z0-9]([a-z0-9_-]{0,61}[a-z0-9])?$";

  /** {name}-registry must fit a 63-character Service name. */
  public static final int MAX_DEPLOYMENT_NAME = 54; // 63 - "-registry".length()

  public static final String APP = "pallas";
  public static final String LABEL_NAME = "app.kubernetes.io/name";
  public static final String LABEL_INSTANCE = "app.kubernetes.io/instance";
  public static final String LABEL_COMPONENT = "app.kubernetes.io/component";
  public static final String LABEL_MANAGED_BY = "app.kubernetes.io/managed-by";
  public static final String LABEL_AGENT = PallasDeployment.GROUP + "/agent";

  /** The label of a pod group's Deployment and pods, which its agents' Services select. */
  public static final String LABEL_POD_GROUP = PallasDeployment.GROUP + "/pod-group";

  public static final String COMPONENT_AGENT = "agent";
  public static final String COMPONENT_REGISTRY = "registry";
  public static final String MANAGED_BY = "pallas-operator";

  /** Pod template annotation: hash of what the pod reads, so a change rolls exactly its pods. */
  public static final String CONFIG_HASH_ANNOTATION = PallasDeployment.GROUP + "/config-hash";

  /** The Service port name every pod serves MCP (or server.json) and /metrics on. */
  public static final String PORT_NAME = "http";

  /**
   * The container port name an agent pod answers the kubelet's probes on, apart from its MCP port,
   * so a flood of connections to the MCP port cannot fail its probes (docs/runtime.md, "Limits").
   */
  public static final String PROBE_PORT_NAME = "probes";

  /** The probe port an agent pod uses, unless its MCP port is this one. */
  public static final int PROBE_PORT = 8086;

  /** Where pods mount the rendered manifest, and its key in the ConfigMap. */
  public static final String CONFIG_DIR = "/etc/pallas";

  /**
   * Where an agent pod has the Secret of {@code spec.auth.staticTokens} mounted, one file per
   * caller ({@code PALLAS_STATIC_TOKENS_DIR}, docs/operator.md, "Pods").
   */
  public static final String STATIC_TOKENS_DIR = "/var/run/pallas/static-tokens";

  /**
   * Where an agent pod of a fleet with {@code spec.auth} has its identity (docs/runtime.md, "Agents
   * calling agents"; {@code PALLAS_IDENTITY_DIR}): a projected volume of ServiceAccount tokens, one
   * per agent it calls ({@link #peerTokenFile}) and one for the API server ({@link
   * #API_TOKEN_FILE}), and the API server's CA ({@link #API_CA_FILE}).
   */
  public static final String IDENTITY_DIR = "/var/run/pallas/identity";

  /** The pod's token for the API server, in {@link #IDENTITY_DIR}: read to fetch its keys. */
  public static final String API_TOKEN_FILE = "kubernetes/token";

  /** The API server's CA certificate, in {@link #IDENTITY_DIR} (ConfigMap kube-root-ca.crt). */
  public static final String API_CA_FILE = "kubernetes/ca.crt";

  /** The writable emptyDir every pod mounts (the root filesystem is read-only). */
  public static final String TMP_DIR = "/tmp";

  /** The pod volumes the operator renders (spec.pod.volumes may not reuse their names). */
  public static final String CONFIG_VOLUME = "config";

  public static final String TMP_VOLUME = "tmp";
  public static final String TOKENS_VOLUME = "static-tokens";
  public static final String IDENTITY_VOLUME = "identity";

  public static final String CONFIG_KEY = "deployment.yaml";
  public static final String CONFIG_FILE = CONFIG_DIR + "/" + CONFIG_KEY;

  private PallasNames() {}

  /** The probe port of an agent pod serving MCP on {@code mcpPort}: never the same port. */
  public static int probePort(int mcpPort) {
    return probePort(Set.of(mcpPort));
  }

  /**
   * The probe port of a pod serving MCP on {@code mcpPorts} (a pod group's agents): the first port
   * from {@link #PROBE_PORT} on that none of them uses.
   */
  public static int probePort(Collection<Integer> mcpPorts) {
    int port = PROBE_PORT;
    while (mcpPorts.contains(port)) {
      port++;
    }
    return port;
  }

  /**
   * The token an agent presents to agent {@code peer}, in {@link #IDENTITY_DIR}: a ServiceAccount
   * token whose audience is that agent's resource identifier ({@link #agentUrl}).
   */
  public static String peerTokenFile(String peer) {
    return "peers/" + peer;
  }

  /**
   * The ServiceAccount an agent's pods run as: {@code serviceAccountName} of its pod settings when
   * set, else {@code X-a}, or {@code X-g} for an agent in pod group g (the group's pods serve all
   * its agents), which the operator creates for fleets with {@code spec.auth}; the agents it calls
   * recognise it by this name (docs/runtime.md, "Agents calling agents").
   */
  public static String serviceAccountOf(PallasDeployment d, AgentSpec agent) {
    String own = d.getSpec().podOf(agent).serviceAccountName();
    return own != null ? own : agentObject(d.name(), d.getSpec().podNameOf(agent));
  }

  /** The subject ({@code sub}) of a ServiceAccount's tokens. */
  public static String serviceAccountSubject(String namespace, String serviceAccount) {
    return "system:serviceaccount:" + namespace + ":" + serviceAccount;
  }

  /** An agent name as it appears in object names and DNS: '_' becomes '-'. */
  public static String dnsName(String agent) {
    return agent.replace('_', '-');
  }

  /** Deployment and Service of one agent: {@code X-a}. */
  public static String agentObject(String deployment, String agent) {
    return deployment + "-" + dnsName(agent);
  }

  public static String registryObject(String deployment) {
    return deployment + "-" + COMPONENT_REGISTRY;
  }

  /** The ConfigMap holding the rendered manifest every pod reads. */
  public static String configMap(String deployment) {
    return deployment + "-config";
  }

  /** The NetworkPolicy admitting who may reach the fleet's pods (NetworkPolicySpec). */
  public static String networkPolicy(String deployment) {
    return deployment + "-network";
  }

  /** Selects every pod of one PallasDeployment: its agents and its registry. */
  public static Map<String, String> fleetSelector(String deployment) {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put(LABEL_NAME, APP);
    labels.put(LABEL_INSTANCE, deployment);
    return labels;
  }

  /** The owned Secret holding inline secret values, which never go into the ConfigMap. */
  public static String inlineSecret(String deployment) {
    return deployment + "-inline";
  }

  /** Labels shared by every object of one PallasDeployment. */
  public static Map<String, String> instanceLabels(String deployment) {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put(LABEL_NAME, APP);
    labels.put(LABEL_INSTANCE, deployment);
    labels.put(LABEL_MANAGED_BY, MANAGED_BY);
    return labels;
  }

  /** Selector of one agent's pods (immutable once a Deployment exists). */
  public static Map<String, String> agentSelector(String deployment, String agent) {
    return agentPods(deployment, LABEL_AGENT, agent);
  }

  public static Map<String, String> agentLabels(String deployment, String agent) {
    Map<String, String> labels = instanceLabels(deployment);
    labels.putAll(agentSelector(deployment, agent));
    return labels;
  }

  /** Selector of a pod group's pods, which serve every agent of the group. */
  public static Map<String, String> podGroupSelector(String deployment, String group) {
    return agentPods(deployment, LABEL_POD_GROUP, group);
  }

  /** Selector of agent pods: one agent's ({@link #LABEL_AGENT}) or one pod group's. */
  private static Map<String, String> agentPods(String deployment, String label, String value) {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put(LABEL_NAME, APP);
    labels.put(LABEL_INSTANCE, deployment);
    labels.put(LABEL_COMPONENT, COMPONENT_AGENT);
    labels.put(label, value);
    return labels;
  }

  public static Map<String, String> podGroupLabels(String deployment, String group) {
    Map<String, String> labels = instanceLabels(deployment);
    labels.putAll(podGroupSelector(deployment, group));
    return labels;
  }

  /**
   * Selector of the pods that serve an agent: its pod group's, else its own (docs/operator.md,
   * "Agents sharing a pod").
   */
  public static Map<String, String> agentPodSelector(PallasDeployment d, AgentSpec agent) {
    return d.getSpec()
        .podGroupOf(agent)
        .map(g -> podGroupSelector(d.name(), g.name()))
        .orElseGet(() -> agentSelector(d.name(), agent.name()));
  }

  public static Map<String, String> registrySelector(String deployment) {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put(LABEL_NAME, APP);
    labels.put(LABEL_INSTANCE, deployment);
    labels.put(LABEL_COMPONENT, COMPONENT_REGISTRY);
    return labels;
  }

  public static Map<String, String> registryLabels(String deployment) {
    Map<String, String> labels = instanceLabels(deployment);
    labels.putAll(registrySelector(deployment));
    return labels;
  }

  /**
   * Host of an agent's Service inside the cluster: {@code X-a.N.svc}, which resolves from any
   * namespace whatever the cluster domain.
   */
  public static String agentServiceHost(String deployment, String namespace, String agent) {
    return agentObject(deployment, agent) + "." + namespace + ".svc";
  }

  /**
   * The MCP URL Daedalus and other agents use for an agent: on {@code spec.host} when set, else on
   * the agent Service's cluster DNS name.
   */
  public static String agentUrl(PallasDeployment d, AgentSpec agent) {
    PallasDeploymentSpec spec = d.getSpec();
    String host =
        spec.host() != null
            ? spec.host()
            : agentServiceHost(d.name(), namespaceOf(d), agent.name());
    return "http://" + host + ":" + spec.portOf(agent) + "/mcp";
  }

  /** The MCP URL one agent uses to call another inside the cluster: always its Service. */
  public static String peerUrl(PallasDeployment d, AgentSpec peer) {
    return "http://"
        + agentServiceHost(d.name(), namespaceOf(d), peer.name())
        + ":"
        + d.getSpec().portOf(peer)
        + "/mcp";
  }

  /** server.json inside the cluster. */
  public static String registryUrl(PallasDeployment d) {
    return "http://"
        + registryObject(d.name())
        + "."
        + namespaceOf(d)
        + ".svc:"
        + d.getSpec().effectiveRegistry().effectivePort()
        + "/.well-known/mcp/server.json";
  }

  /**
   * The registry's MCP URL (its resource identifier with inbound authentication): on {@code
   * spec.host} when set, else on the registry Service's cluster DNS name.
   */
  public static String registryMcpUrl(PallasDeployment d) {
    PallasDeploymentSpec spec = d.getSpec();
    String host =
        spec.host() != null
            ? spec.host()
            : registryObject(d.name()) + "." + namespaceOf(d) + ".svc";
    return "http://" + host + ":" + spec.effectiveRegistry().effectivePort() + "/mcp";
  }

  /** The namespace of a PallasDeployment, "default" when its metadata names none (serve). */
  public static String namespaceOf(PallasDeployment d) {
    String namespace = d.getMetadata().getNamespace();
    return namespace == null ? "default" : namespace;
  }
}
