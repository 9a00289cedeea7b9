package ca.helu.pallas.api;

import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Checks a parsed PallasDeployment; each problem names the field path and the offending value. The
 * same rules are the CRD's CEL rules and the operator's checks, so a manifest that serves locally
 * also applies to a cluster.
 */
public final class DeploymentValidator {
  /** Agent and server names: DNS-friendly, '_' allowed (tech_research). */
  public static final Pattern NAME = Pattern.compile("^[a-z0-9]([a-z0-9_-]{0,61}[a-z0-9])?$");

  /** server.json name prefix (reverse domain). */
  public static final Pattern REGISTRY_NAMESPACE = Pattern.compile("^[a-zA-Z0-9.-]+$");

  private static final Pattern METADATA_NAME =
      Pattern.compile("^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$");
  private static final Pattern ENV_NAME = Pattern.compile("^[A-Za-z_][A-Za-z0-9_]*$");
  private static final Pattern HEADER_NAME = Pattern.compile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$");
  private static final Pattern MODEL =
      Pattern.compile("^(passthrough|playback|slow|(openai|anthropic)\\.[A-Za-z0-9._:/@-]+)$");
  private static final int MAX_DESCRIPTION = 100;

  private DeploymentValidator() {}

  public static List<String> validate(PallasDeployment d) {
    List<String> p = new ArrayList<>();
    if (!PallasDeployment.API_VERSION.equals(d.apiVersion())) {
      p.add("apiVersion: '" + d.apiVersion() + "' must be " + PallasDeployment.API_VERSION);
    }
    if (!PallasDeployment.KIND.equals(d.kind())) {
      p.add("kind: '" + d.kind() + "' must be " + PallasDeployment.KIND);
    }
    String name = d.name();
    if (name == null) {
      p.add("metadata.name: required");
    } else if (!METADATA_NAME.matcher(name).matches()) {
      p.add(
          "metadata.name: '"
              + name
              + "' must be lower-case letters, digits and '-', at most 63 characters");
    }
    if (d.spec() == null) {
      p.add("spec: required");
      return p;
    }
    validateSpec(d.spec(), p);
    return p;
  }

  private static void validateSpec(PallasDeploymentSpec s, List<String> p) {
    RegistrySpec registry = s.effectiveRegistry();
    checkPort("spec.registry.port", registry.port(), p);
    if (registry.namespace() != null
        && !REGISTRY_NAMESPACE.matcher(registry.namespace()).matches()) {
      p.add(
          "spec.registry.namespace: '"
              + registry.namespace()
              + "' must be a reverse-domain name (letters, digits, '.' and '-')");
    }
    if (s.version() != null && s.version().isBlank()) {
      p.add("spec.version: must not be blank");
    }
    if (s.defaultModel() != null) {
      checkModel("spec.defaultModel", s.defaultModel(), p);
    }
    ModelCapabilities caps = s.effectiveModelCapabilities();
    positive("spec.modelCapabilities.contextWindow", caps.contextWindow(), p);
    positive("spec.modelCapabilities.maxOutputTokens", caps.maxOutputTokens(), p);
    ProvidersSpec providers = s.effectiveProviders();
    checkProvider("spec.providers.openai", providers.openai(), p);
    checkProvider("spec.providers.anthropic", providers.anthropic(), p);

    Map<String, Integer> serverIndex = new LinkedHashMap<>();
    for (int i = 0; i < s.effectiveMcpServers().size(); i++) {
      McpServerSpec server = s.effectiveMcpServers().get(i);
      String at = "spec.mcpServers[" + i + "]";
      if (server == null) {
        p.add(at + ": must not be empty");
        continue;
      }
      if (checkName(at + ".name", server.name(), p)
          && serverIndex.putIfAbsent(server.name(), i) != null) {
        p.add(
            at
                + ".name: '"
                + server.name()
                + "' duplicates spec.mcpServers["
                + serverIndex.get(server.name())
                + "]");
      }
      checkUrl(at + ".url", server.url(), p);
      positive(at + ".timeoutSeconds", server.timeoutSeconds(), p);
      List<HeaderSpec> headers = server.effectiveHeaders();
      for (int h = 0; h < headers.size(); h++) {
        checkHeader(at + ".headers[" + h + "]", headers.get(h), p);
      }
    }

    List<AgentSpec> agents = s.effectiveAgents();
    if (agents.isEmpty()) {
      p.add("spec.agents: at least one agent is required");
    }
    Map<String, Integer> agentIndex = new LinkedHashMap<>();
    for (int i = 0; i < agents.size(); i++) {
      AgentSpec a = agents.get(i);
      if (a == null) {
        p.add("spec.agents[" + i + "]: must not be empty");
        continue;
      }
      String at = "spec.agents[" + i + "]";
      if (!checkName(at + ".name", a.name(), p)) {
        continue;
      }
      if (agentIndex.putIfAbsent(a.name(), i) != null) {
        p.add(
            at
                + ".name: '"
                + a.name()
                + "' duplicates spec.agents["
                + agentIndex.get(a.name())
                + "]");
      }
      if (serverIndex.containsKey(a.name())) {
        p.add(
            at
                + ".name: '"
                + a.name()
                + "' is also the name of spec.mcpServers["
                + serverIndex.get(a.name())
                + "]; servers lists could not tell them apart");
      }
    }
    Map<Integer, String> ports = new HashMap<>();
    ports.put(registry.effectivePort(), "spec.registry.port");
    for (int i = 0; i < agents.size(); i++) {
      AgentSpec a = agents.get(i);
      if (a == null || a.name() == null) {
        continue;
      }
      String at = "spec.agents[" + i + "]";
      checkPort(at + ".port", a.port(), p);
      int port = s.portOf(a);
      String owner = ports.putIfAbsent(port, at + ".port");
      if (owner != null) {
        p.add(
            at
                + ".port: "
                + port
                + (a.port() == null ? " (the default, registry.port + 1 + index)" : "")
                + " is already used by "
                + owner);
      }
      if (a.description() != null
          && (a.description().isBlank() || a.description().length() > MAX_DESCRIPTION)) {
        p.add(
            at
                + ".description: must be 1 to "
                + MAX_DESCRIPTION
                + " characters (the registry's limit), got "
                + a.description().length());
      }
      if (a.title() != null && a.title().isBlank()) {
        p.add(at + ".title: must not be blank");
      }
      String model = s.modelOf(a);
      if (model == null) {
        p.add(at + ".model: required when spec.defaultModel is not set");
      } else if (a.model() != null) {
        checkModel(at + ".model", a.model(), p);
      }
      List<String> servers = a.effectiveServers();
      for (int j = 0; j < servers.size(); j++) {
        String ref = servers.get(j);
        String refAt = at + ".servers[" + j + "]";
        if (ref == null) {
          p.add(refAt + ": must not be empty");
        } else if (ref.equals(a.name())) {
          p.add(refAt + ": '" + ref + "' is the agent itself");
        } else if (!serverIndex.containsKey(ref) && !agentIndex.containsKey(ref)) {
          p.add(refAt + ": '" + ref + "' names no entry of spec.mcpServers or spec.agents");
        }
      }
      List<String> deps = a.effectiveDependsOn();
      for (int j = 0; j < deps.size(); j++) {
        String ref = deps.get(j);
        String refAt = at + ".dependsOn[" + j + "]";
        if (ref == null) {
          p.add(refAt + ": must not be empty");
        } else if (ref.equals(a.name())) {
          p.add(refAt + ": '" + ref + "' is the agent itself");
        } else if (!agentIndex.containsKey(ref)) {
          p.add(refAt + ": '" + ref + "' names no entry of spec.agents");
        }
      }
      checkRequestParams(at + ".requestParams", a.requestParams(), p);
      if (a.replicas() != null && a.replicas() < 0) {
        p.add(at + ".replicas: " + a.replicas() + " must be >= 0");
      }
      List<Icon> icons = a.effectiveIcons();
      for (int j = 0; j < icons.size(); j++) {
        Icon icon = icons.get(j);
        if (icon == null || icon.src() == null || icon.src().isBlank()) {
          p.add(at + ".icons[" + j + "].src: required");
        }
      }
    }
    if (p.isEmpty()) {
      findCycle(s).ifPresent(p::add);
    }
  }

  /** Agents each agent needs running first: its dependsOn plus the agents named in servers. */
  public static Map<String, Set<String>> agentDependencies(PallasDeploymentSpec s) {
    Set<String> agentNames = new HashSet<>();
    s.effectiveAgents().forEach(a -> agentNames.add(a.name()));
    Map<String, Set<String>> deps = new LinkedHashMap<>();
    for (AgentSpec a : s.effectiveAgents()) {
      Set<String> mine = new java.util.LinkedHashSet<>(a.effectiveDependsOn());
      a.effectiveServers().stream().filter(agentNames::contains).forEach(mine::add);
      deps.put(a.name(), mine);
    }
    return deps;
  }

  private static java.util.Optional<String> findCycle(PallasDeploymentSpec s) {
    Map<String, Set<String>> deps = agentDependencies(s);
    Map<String, Integer> state = new HashMap<>(); // 1 = visiting, 2 = done
    for (String start : deps.keySet()) {
      List<String> stack = new ArrayList<>();
      String cycle = visit(start, deps, state, stack);
      if (cycle != null) {
        return java.util.Optional.of(
            "spec.agents: dependency cycle "
                + cycle
                + " (through dependsOn and servers naming agents)");
      }
    }
    return java.util.Optional.empty();
  }

  private static String visit(
      String node, Map<String, Set<String>> deps, Map<String, Integer> state, List<String> stack) {
    Integer st = state.get(node);
    if (st != null && st == 2) {
      return null;
    }
    if (st != null && st == 1) {
      List<String> loop = new ArrayList<>(stack.subList(stack.indexOf(node), stack.size()));
      loop.add(node);
      return String.join(" -> ", loop);
    }
    state.put(node, 1);
    stack.add(node);
    for (String next : deps.getOrDefault(node, Set.of())) {
      String cycle = visit(next, deps, state, stack);
      if (cycle != null) {
        return cycle;
      }
    }
    stack.remove(stack.size() - 1);
    state.put(node, 2);
    return null;
  }

  private static boolean checkName(String at, String name, List<String> p) {
    if (name == null) {
      p.add(at + ": required");
      return false;
    }
    if (!NAME.matcher(name).matches()) {
      p.add(
          at
              + ": '"
              + name
              + "' must be lower-case letters, digits, '-' or '_', start and end with a letter"
              + " or digit, at most 63 characters");
      return false;
    }
    return true;
  }

  private static void checkPort(String at, Integer port, List<String> p) {
    if (port != null && (port < 1 || port > 65535)) {
      p.add(at + ": " + port + " is not a port (1-65535)");
    }
  }

  private static void positive(String at, Integer value, List<String> p) {
    if (value != null && value < 1) {
      p.add(at + ": " + value + " must be >= 1");
    }
  }

  private static void checkModel(String at, String model, List<String> p) {
    if (!MODEL.matcher(model).matches()) {
      p.add(
          at
              + ": '"
              + model
              + "' is not a model: use openai.<model>, anthropic.<model>, passthrough, playback"
              + " or slow");
    }
  }

  private static void checkUrl(String at, String url, List<String> p) {
    if (url == null) {
      p.add(at + ": required");
      return;
    }
    try {
      URI uri = new URI(url);
      if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))
          || uri.getHost() == null) {
        p.add(at + ": '" + url + "' must be an http:// or https:// URL with a host");
      }
    } catch (java.net.URISyntaxException e) {
      p.add(at + ": '" + url + "' is not a URL (" + e.getReason() + ")");
    }
  }

  private static void checkProvider(String at, ProviderSpec provider, List<String> p) {
    if (provider == null) {
      return;
    }
    if (provider.baseUrl() != null) {
      checkUrl(at + ".baseUrl", provider.baseUrl(), p);
    }
    if (provider.apiKey() != null) {
      checkSecret(at + ".apiKey", provider.apiKey(), p);
    }
  }

  private static void checkHeader(String at, HeaderSpec header, List<String> p) {
    if (header == null) {
      p.add(at + ": must not be empty");
      return;
    }
    if (header.name() == null) {
      p.add(at + ".name: required");
    } else if (!HEADER_NAME.matcher(header.name()).matches()) {
      p.add(at + ".name: '" + header.name() + "' is not a valid HTTP header name");
    }
    if ((header.value() == null) == (header.valueFrom() == null)) {
      p.add(at + ": set exactly one of value and valueFrom");
    } else if (header.valueFrom() != null) {
      checkSecret(at + ".valueFrom", header.valueFrom(), p);
    }
  }

  private static void checkSecret(String at, SecretValue secret, List<String> p) {
    int set =
        (secret.value() != null ? 1 : 0)
            + (secret.env() != null ? 1 : 0)
            + (secret.secretKeyRef() != null ? 1 : 0);
    if (set != 1) {
      p.add(at + ": set exactly one of value, env and secretKeyRef");
      return;
    }
    if (secret.env() != null && !ENV_NAME.matcher(secret.env()).matches()) {
      p.add(at + ".env: '" + secret.env() + "' is not an environment variable name");
    }
    if (secret.secretKeyRef() != null) {
      if (secret.secretKeyRef().name() == null || secret.secretKeyRef().name().isBlank()) {
        p.add(at + ".secretKeyRef.name: required");
      }
      if (secret.secretKeyRef().key() == null || secret.secretKeyRef().key().isBlank()) {
        p.add(at + ".secretKeyRef.key: required");
      }
    }
  }

  private static void checkRequestParams(String at, RequestParams r, List<String> p) {
    if (r == null) {
      return;
    }
    if (r.temperature() != null && (r.temperature() < 0 || r.temperature() > 2)) {
      p.add(at + ".temperature: " + r.temperature() + " must be between 0 and 2");
    }
    if (r.topP() != null && (r.topP() <= 0 || r.topP() > 1)) {
      p.add(at + ".topP: " + r.topP() + " must be greater than 0 and at most 1");
    }
    positive(at + ".topK", r.topK(), p);
    positive(at + ".maxTokens", r.maxTokens(), p);
    if (r.maxIterations() != null && (r.maxIterations() < 1 || r.maxIterations() > 1000)) {
      p.add(at + ".maxIterations: " + r.maxIterations() + " must be between 1 and 1000");
    }
  }
}
