package ca.helu.pallas.operator.render;

import ca.helu.pallas.api.AgentGraph;
import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.ManifestParser;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasDeploymentSpec;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.api.Provider;
import ca.helu.pallas.api.ProviderSpec;
import ca.helu.pallas.api.SecretFields;
import ca.helu.pallas.api.SecretValue.SecretKeyRef;
import ca.helu.pallas.api.SecretVariables;
import ca.helu.pallas.api.StaticTokensSpec;
import ca.helu.pallas.api.StoreSpec;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * Renders a valid PallasDeployment for the cluster (a pure function of the resource and the digests
 * of the Secrets it references). Inline secret values move to the owned Secret {@code X-inline} and
 * the manifest refers to them by {@code secretKeyRef}, so the ConfigMap holds no secret; each
 * {@code secretKeyRef} reaches the pods that use it (its agents', and the registry's for a header
 * of a server an agent calls) as the variable {@link SecretVariables} names.
 */
public final class FleetRenderer {
  private static final ObjectMapper CANONICAL =
      JsonMapper.builder()
          .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
          .enable(MapperFeature.SORT_PROPERTIES_ALPHABETICALLY)
          .build();

  private FleetRenderer() {}

  public static RenderedFleet render(PallasDeployment primary, SecretDigests digests) {
    return render(primary, digests, null);
  }

  /**
   * As {@link #render(PallasDeployment, SecretDigests)}, a fleet without {@code spec.store} keeping
   * its conversations in the store of Secret {@code defaultStore} when its namespace holds one (the
   * chart's {@code store.fleetDefault}, docs/operator.md, "The conversation store").
   */
  public static RenderedFleet render(
      PallasDeployment primary, SecretDigests digests, String defaultStore) {
    String name = primary.getMetadata().getName();
    PallasDeploymentSpec spec = primary.getSpec();
    Map<String, String> inline = new TreeMap<>();
    PallasDeploymentSpec rendered =
        SecretFields.withoutInlineValues(spec, PallasNames.inlineSecret(name), inline);
    PallasDeployment manifest =
        new PallasDeployment(
            new ObjectMetaBuilder()
                .withName(name)
                .withNamespace(primary.getMetadata().getNamespace())
                .build(),
            rendered);
    String yaml;
    try {
      yaml = ManifestParser.yamlMapper().writeValueAsString(manifest);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot render " + name, e);
    }

    List<String> missing = new ArrayList<>();
    StoreSpec store = storeOf(spec, digests, defaultStore);
    PodSecrets.Source secrets =
        new PodSecrets.Source(PallasNames.inlineSecret(name), inline, digests, missing);
    AgentGraph graph = AgentGraph.of(rendered);
    Map<String, AgentPod> agents = new LinkedHashMap<>();
    for (AgentSpec agent : rendered.effectiveAgents()) {
      PodSecrets pod = new PodSecrets(secrets);
      pod.keys(secretsOf(rendered, v -> v.usedBy().test(agent)));
      if (store != null) {
        storeVariables(
            store,
            rendered.store() != null ? "spec.store.secretName" : "the operator's default store",
            pod);
      }
      staticTokens(rendered, pod);
      int port = rendered.portOf(agent);
      Map<String, Object> view = agentView(rendered, agent, manifest, pod.digests());
      agents.put(
          agent.name(),
          new AgentPod(
              agent, port, pod.env(), sha256(canonical(view)), graph.dependencies(agent.name())));
    }
    return new RenderedFleet(
        primary,
        yaml,
        Map.copyOf(inline),
        agents,
        registry(rendered, secrets),
        missing.stream().distinct().toList());
  }

  /**
   * The registry's pod (docs/operator.md, "The registry follows the spec in well under a second"):
   * the header keys of the servers its call_tool may call, by {@code secretKeyRef} as the agents
   * get them, and the static tokens its /mcp asks for. It follows the manifest live, but reads
   * these and {@code spec.auth} once at start: their change rolls it.
   */
  private static RegistryPod registry(PallasDeploymentSpec spec, PodSecrets.Source secrets) {
    PodSecrets pod = new PodSecrets(secrets);
    pod.keys(secretsOf(spec, SecretFields.Value::usedByRegistry));
    staticTokens(spec, pod);
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("auth", spec.auth());
    view.put("secrets", pod.digests());
    return new RegistryPod(pod.env(), sha256(canonical(view)));
  }

  /**
   * The store a fleet's agents keep their conversations in: {@code spec.store}, else the operator's
   * default when the fleet's namespace holds its Secret, else none (each pod's memory).
   */
  public static StoreSpec storeOf(
      PallasDeploymentSpec spec, SecretDigests digests, String defaultStore) {
    if (spec.store() != null || defaultStore == null) {
      return spec.store();
    }
    return digests.of(defaultStore).isPresent() ? new StoreSpec(defaultStore) : null;
  }

  /**
   * The conversation store's URL and credentials, each from its key of the store's Secret by {@code
   * secretKeyRef}, never by value (docs/operator.md, "The conversation store"); their digests roll
   * the pods when the Secret changes, since a pod reads its environment once.
   */
  private static void storeVariables(StoreSpec store, String field, PodSecrets pod) {
    StoreSpec.VARIABLES_BY_KEY.forEach(
        (key, variable) -> pod.key(variable, new SecretKeyRef(store.secretName(), key), field));
  }

  /**
   * Static tokens: the Secret is mounted in the pod (AgentDeploymentsDependentResource,
   * RegistryDeploymentDependentResource), its directory named by PALLAS_STATIC_TOKENS_DIR; the
   * digest of every key rolls the pods when a token changes, since the runtime reads them once at
   * start (docs/runtime.md, "Inbound authentication").
   */
  private static void staticTokens(PallasDeploymentSpec spec, PodSecrets pod) {
    if (spec.auth() == null || spec.auth().staticTokens() == null) {
      return;
    }
    StaticTokensSpec tokens = spec.auth().staticTokens();
    pod.value(STATIC_TOKENS_VARIABLE, PallasNames.STATIC_TOKENS_DIR);
    pod.tokens(tokens.secretName(), "spec.auth.staticTokens.secretName");
  }

  /** The runtime's variable naming the static tokens' directory (docs/configuration.md). */
  static final String STATIC_TOKENS_VARIABLE = "PALLAS_STATIC_TOKENS_DIR";

  /**
   * Everything an agent's pod reads from the manifest (its own entry, its model's provider, its
   * servers, the ports of the agents it calls, the shared capabilities) plus the digests of its
   * secrets: the pod is rolled exactly when this changes.
   */
  private static Map<String, Object> agentView(
      PallasDeploymentSpec spec,
      AgentSpec agent,
      PallasDeployment manifest,
      Map<String, String> secretDigests) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("deployment", manifest.getMetadata().getName());
    view.put("namespace", manifest.getMetadata().getNamespace());
    view.put("version", spec.effectiveVersion());
    // replicas, autoscaling, resources, icons and dependsOn change no pod's behaviour: scaling
    // must not roll
    view.put(
        "agent",
        new AgentSpec(
            agent.name(),
            agent.title(),
            agent.description(),
            agent.port(),
            agent.instruction(),
            agent.model(),
            agent.servers(),
            null,
            agent.requestParams(),
            agent.instanceScope(),
            null,
            null,
            null,
            null,
            null,
            null,
            null));
    view.put("port", spec.portOf(agent));
    view.put("model", spec.modelOf(agent));
    view.put("provider", providerOf(spec, agent));
    view.put("capabilities", spec.effectiveModelCapabilities());
    // who may call, and how much: the runtime reads both at start
    view.put("auth", spec.auth());
    view.put("callerLimits", spec.callerLimitsOf(agent));
    view.put("tracing", spec.tracing());
    Map<String, Object> servers = new TreeMap<>();
    for (String server : agent.effectiveServers()) {
      spec.mcpServer(server).ifPresent(s -> servers.put(server, s));
      spec.agent(server).ifPresent(peer -> servers.put(server, spec.portOf(peer)));
    }
    view.put("servers", servers);
    view.put("secrets", secretDigests);
    return view;
  }

  private static ProviderSpec providerOf(PallasDeploymentSpec spec, AgentSpec agent) {
    return Provider.ofModel(spec.modelOf(agent)).map(p -> p.of(spec)).orElse(null);
  }

  /** The Secret keys a pod needs: its model's provider key, its servers' headers... */
  private static List<SecretRef> secretsOf(
      PallasDeploymentSpec spec, Predicate<SecretFields.Value> needed) {
    return SecretFields.values(spec).stream()
        .filter(v -> v.value().secretKeyRef() != null && needed.test(v))
        .map(v -> new SecretRef(v.value().secretKeyRef(), v.field()))
        .toList();
  }

  private static String canonical(Object view) {
    try {
      return CANONICAL.writeValueAsString(view);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Hex SHA-256 of a text. */
  public static String sha256(String text) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
