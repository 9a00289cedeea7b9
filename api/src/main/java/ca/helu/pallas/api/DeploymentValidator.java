package ca.helu.pallas.api;

import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Checks a parsed PallasDeployment; each problem names the field path and the offending value. The
 * same rules are the CRD's CEL rules and the operator's checks, so a manifest that serves locally
 * also applies to a cluster.
 */
public final class DeploymentValidator {
  public static final String MODEL_PATTERN =
      "^(passthrough|playback|slow|(openai|anthropic)\\.[A-Za-z0-9._:/@-]+)$";
  public static final String HEADER_NAME_PATTERN = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";
  public static final String ENV_NAME_PATTERN = "^[A-Za-z_][A-Za-z0-9_]*$";
  public static final String REGISTRY_NAMESPACE_PATTERN = "^[a-zA-Z0-9.-]+$";

  /** A Secret's name: a DNS subdomain. */
  public static final String SECRET_NAME_PATTERN =
      "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";

  /** A Prometheus duration, as a ServiceMonitor's interval takes it. */
  public static final String DURATION_PATTERN =
      "^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$";

  /** An OAuth scope (RFC 6749 §3.3: printable ASCII but space, '"' and '\\'). */
  public static final String SCOPE_PATTERN = "^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$";

  /**
   * Token passthrough refused where the agents validate OIDC tokens: such a token's audience is the
   * agent, and the MCP authorization specification forbids passing it on (docs/runtime.md, "Bearer
   * propagation").
   */
  public static final String FORWARDING_REFUSED =
      "forwardInboundAuth would pass callers' tokens, issued for this fleet's agents (spec.auth.oidc),"
          + " on to another server, which the MCP authorization specification forbids; give the"
          + " server a credential of its own (headers), or set spec.auth.oidc.allowForwarding: true";

  /** Token exchange trades callers' OIDC tokens, as the agents' own client of that issuer. */
  public static final String EXCHANGE_NEEDS_CLIENT =
      "tokenExchange trades callers' tokens at the issuer of spec.auth.oidc, as the agents' own"
          + " client: it needs spec.auth.oidc with client (its id and secret)";

  /** The agents' client secret is never stored in the resource. */
  public static final String INLINE_CLIENT_SECRET =
      "an inline client secret is not accepted: give it by secretKeyRef (or env, with serve)";

  /** Entries of spec.auth.oidc.requiredScopes. */
  public static final int MAX_SCOPES = 32;

  /** The CEL form of {@link #checkUrl}. */
  public static final String CEL_HTTP_URL =
      "isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHostname() != ''";

  /** Bounds that keep the CRD's CEL rules within the API server's cost budget. */
  public static final int MAX_AGENTS = 64;

  public static final int MAX_SERVERS = 64;

  /** Entries of one agent's servers or dependsOn. */
  public static final int MAX_REFERENCES = 32;

  public static final int MAX_DESCRIPTION = 100;

  private static final Pattern NAME = Pattern.compile(PallasNames.NAME_PATTERN);
  private static final Pattern REGISTRY_NAMESPACE = Pattern.compile(REGISTRY_NAMESPACE_PATTERN);
  private static final Pattern NAMESPACE = Pattern.compile(NetworkPolicySpec.NAMESPACE_PATTERN);
  private static final Pattern METADATA_NAME = Pattern.compile("^[a-z]([-a-z0-9]*[a-z0-9])?$");
  private static final Pattern ENV_NAME = Pattern.compile(ENV_NAME_PATTERN);
  private static final Pattern HEADER_NAME = Pattern.compile(HEADER_NAME_PATTERN);
  private static final Pattern MODEL = Pattern.compile(MODEL_PATTERN);
  private static final Pattern DURATION = Pattern.compile(DURATION_PATTERN);
  private static final Pattern SECRET_NAME = Pattern.compile(SECRET_NAME_PATTERN);
  private static final Pattern SCOPE = Pattern.compile(SCOPE_PATTERN);

  private DeploymentValidator() {}

  /** Every problem of a deployment, each naming its field; empty when it is valid. */
  public static List<String> validate(PallasDeployment d) {
    List<String> p = new ArrayList<>();
    String name = d.name();
    if (name == null) {
      p.add("metadata.name: required");
    } else if (!METADATA_NAME.matcher(name).matches()
        || name.length() > PallasNames.MAX_DEPLOYMENT_NAME) {
      p.add(
          "metadata.name: '"
              + name
              + "' must start with a letter, hold only lower-case letters, digits and '-', and be"
              + " at most "
              + PallasNames.MAX_DEPLOYMENT_NAME
              + " characters (it prefixes Service names)");
    }
    if (d.getSpec() == null) {
      p.add("spec: required");
      return p;
    }
    validateSpec(d.getSpec(), p);
    if (name != null) {
      List<AgentSpec> agents = d.getSpec().effectiveAgents();
      for (int i = 0; i < agents.size(); i++) {
        AgentSpec a = agents.get(i);
        if (a != null && a.name() != null && name.length() + 1 + a.name().length() > 63) {
          p.add(
              "spec.agents["
                  + i
                  + "].name: '"
                  + PallasNames.agentObject(name, a.name())
                  + "' (the agent's Service) would be longer than 63 characters");
        }
      }
    }
    return p;
  }

  private static void validateSpec(PallasDeploymentSpec s, List<String> p) {
    RegistrySpec registry = s.effectiveRegistry();
    checkPort("spec.registry.port", registry.port(), p);
    if (s.effectiveMcpServers().size() > MAX_SERVERS) {
      p.add("spec.mcpServers: at most " + MAX_SERVERS + " entries");
    }
    if (s.effectiveAgents().size() > MAX_AGENTS) {
      p.add("spec.agents: at most " + MAX_AGENTS + " entries");
    }
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
      between(at + ".maxConcurrentCalls", server.maxConcurrentCalls(), 1, 100_000, p);
      List<HeaderSpec> headers = server.effectiveHeaders();
      for (int h = 0; h < headers.size(); h++) {
        checkHeader(at + ".headers[" + h + "]", headers.get(h), p);
      }
      checkTokenExchange(at, server, s.auth(), p);
    }

    List<AgentSpec> agents = s.effectiveAgents();
    if (agents.isEmpty()) {
      p.add("spec.agents: at least one agent is required");
    }
    Map<String, Integer> agentIndex = new LinkedHashMap<>();
    Map<String, Integer> dnsIndex = new HashMap<>();
    for (int i = 0; i < agents.size(); i++) {
      AgentSpec a = agents.get(i);
      if (a == null) {
        p.add("spec.agents[" + i + "]: must not be empty");
        continue;
      }
      String at = "spec.agents[" + i + "]";
      checkCallerLimits(at + ".callerLimits", a.callerLimits(), p);
      PodSettingsSpec.check(at + ".pod", a.pod(), p);
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
      } else if (dnsIndex.putIfAbsent(PallasNames.dnsName(a.name()), i) != null) {
        p.add(
            at
                + ".name: '"
                + a.name()
                + "' and spec.agents["
                + dnsIndex.get(PallasNames.dnsName(a.name()))
                + "] both become '"
                + PallasNames.dnsName(a.name())
                + "' in object names ('_' is read as '-')");
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
      if (a.effectiveServers().size() > MAX_REFERENCES) {
        p.add(at + ".servers: at most " + MAX_REFERENCES + " entries");
      }
      if (a.effectiveDependsOn().size() > MAX_REFERENCES) {
        p.add(at + ".dependsOn: at most " + MAX_REFERENCES + " entries");
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
      checkAutoscaling(at, a, p);
      List<Icon> icons = a.effectiveIcons();
      for (int j = 0; j < icons.size(); j++) {
        Icon icon = icons.get(j);
        if (icon == null || icon.src() == null || icon.src().isBlank()) {
          p.add(at + ".icons[" + j + "].src: required");
        }
      }
    }
    MonitoringSpec.ServiceMonitorSpec monitor =
        s.monitoring() == null ? null : s.monitoring().serviceMonitor();
    if (monitor != null
        && monitor.interval() != null
        && !DURATION.matcher(monitor.interval()).matches()) {
      p.add(
          "spec.monitoring.serviceMonitor.interval: '"
              + monitor.interval()
              + "' is not a duration such as 30s or 1m");
    }
    if (s.store() != null) {
      checkSecretName("spec.store.secretName", s.store().secretName(), p);
    }
    checkAuth(s.auth(), p);
    if (s.auth() != null
        && s.auth().oidc() != null
        && !s.auth().oidc().forwardingAllowed()
        && s.effectiveMcpServers().stream().anyMatch(McpServerSpec::effectiveForwardInboundAuth)) {
      p.add("spec.mcpServers: " + FORWARDING_REFUSED);
    }
    checkCallerLimits("spec.callerLimits", s.callerLimits(), p);
    PodSettingsSpec.check("spec.pod", s.pod(), p);
    checkTracing(s.tracing(), p);
    if (s.networkPolicy() != null) {
      checkPeers("spec.networkPolicy.from", s.networkPolicy().from(), p);
      checkPeers("spec.networkPolicy.metricsFrom", s.networkPolicy().metricsFrom(), p);
    }
    if (p.isEmpty()) {
      AgentGraph.of(s)
          .cycle()
          .ifPresent(cycle ->
              p.add(
                  "spec.agents: dependency cycle "
                      + cycle
                      + " (through dependsOn and servers naming agents)"));
    }
  }

  private static void checkAuth(AuthSpec auth, List<String> p) {
    if (auth == null) {
      return;
    }
    if ((auth.oidc() == null) == (auth.staticTokens() == null)) {
      p.add("spec.auth: set exactly one of oidc and staticTokens");
    }
    OidcAuthSpec oidc = auth.oidc();
    if (oidc != null) {
      checkUrl("spec.auth.oidc.issuerUrl", oidc.issuerUrl(), p);
      if (oidc.audience() != null && oidc.audience().isBlank()) {
        p.add("spec.auth.oidc.audience: must not be blank");
      }
      checkScopes("spec.auth.oidc.requiredScopes", oidc.effectiveRequiredScopes(), p);
      checkClient(oidc.client(), p);
    }
    if (auth.staticTokens() != null) {
      checkSecretName("spec.auth.staticTokens.secretName", auth.staticTokens().secretName(), p);
    }
  }

  private static void checkClient(OAuthClientSpec client, List<String> p) {
    if (client == null) {
      return;
    }
    String at = "spec.auth.oidc.client";
    if (client.id() == null || client.id().isBlank()) {
      p.add(at + ".id: required");
    } else if (!client.id().matches("^[\\x21-\\x7E]+$") || client.id().length() > 256) {
      p.add(
          at + ".id: '" + client.id() + "' is not an OAuth client id (printable ASCII, no spaces)");
    }
    if (client.secret() == null) {
      p.add(at + ".secret: required");
    } else if (client.secret().value() != null) {
      p.add(at + ".secret: " + INLINE_CLIENT_SECRET);
    } else {
      checkSecret(at + ".secret", client.secret(), p);
    }
  }

  /** A server's tokenExchange, beside its other credentials and the fleet's OIDC client. */
  private static void checkTokenExchange(
      String at, McpServerSpec server, AuthSpec auth, List<String> p) {
    TokenExchangeSpec exchange = server.tokenExchange();
    if (exchange == null) {
      return;
    }
    if (exchange.audience() == null && exchange.resource() == null) {
      p.add(at + ".tokenExchange: set audience, resource or both: whom the exchanged token is for");
    }
    if (exchange.audience() != null && exchange.audience().isBlank()) {
      p.add(at + ".tokenExchange.audience: must not be blank");
    }
    if (exchange.resource() != null) {
      checkUrl(at + ".tokenExchange.resource", exchange.resource(), p);
    }
    checkScopes(at + ".tokenExchange.scopes", exchange.effectiveScopes(), p);
    if (server.effectiveForwardInboundAuth()) {
      p.add(at + ": set at most one of tokenExchange and forwardInboundAuth");
    }
    if (server.effectiveHeaders().stream()
        .anyMatch(h -> h != null && "authorization".equalsIgnoreCase(h.name()))) {
      p.add(
          at
              + ": tokenExchange sends the exchanged token as the Authorization header: headers"
              + " may not set one too");
    }
    if (auth == null || auth.oidc() == null || auth.oidc().client() == null) {
      p.add(at + ".tokenExchange: " + EXCHANGE_NEEDS_CLIENT);
    }
  }

  private static void checkScopes(String at, List<String> scopes, List<String> p) {
    if (scopes.size() > MAX_SCOPES) {
      p.add(at + ": at most " + MAX_SCOPES + " entries");
    }
    for (int i = 0; i < scopes.size(); i++) {
      String scope = scopes.get(i);
      if (scope == null || !SCOPE.matcher(scope).matches() || scope.length() > 256) {
        p.add(
            at
                + "["
                + i
                + "]: '"
                + scope
                + "' is not an OAuth scope (printable ASCII without spaces, '\"' or '\\', at"
                + " most 256 characters)");
      }
    }
  }

  private static void checkSecretName(String at, String secret, List<String> p) {
    if (secret == null) {
      p.add(at + ": required");
    } else if (!SECRET_NAME.matcher(secret).matches() || secret.length() > 253) {
      p.add(
          at
              + ": '"
              + secret
              + "' is not a Secret name (a DNS subdomain: lower-case letters, digits, '-' and '.', at"
              + " most 253 characters)");
    }
  }

  private static void checkAutoscaling(String at, AgentSpec a, List<String> p) {
    AutoscalingSpec scaling = a.autoscaling();
    if (scaling == null) {
      return;
    }
    if (a.replicas() != null) {
      p.add(at + ".autoscaling: set replicas or autoscaling, not both (the autoscaler sets them)");
    }
    String in = at + ".autoscaling";
    between(in + ".minReplicas", scaling.minReplicas(), 1, AutoscalingSpec.MAX_REPLICAS, p);
    if (scaling.maxReplicas() == null) {
      p.add(in + ".maxReplicas: required");
    } else {
      between(in + ".maxReplicas", scaling.maxReplicas(), 1, AutoscalingSpec.MAX_REPLICAS, p);
      if (scaling.minReplicas() != null && scaling.minReplicas() > scaling.maxReplicas()) {
        p.add(
            in
                + ".minReplicas: "
                + scaling.minReplicas()
                + " must not exceed maxReplicas ("
                + scaling.maxReplicas()
                + ")");
      }
    }
    between(
        in + ".targetInFlightCalls",
        scaling.targetInFlightCalls(),
        1,
        AutoscalingSpec.MAX_TARGET_IN_FLIGHT_CALLS,
        p);
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

  private static void checkTracing(TracingSpec tracing, List<String> p) {
    if (tracing == null) {
      return;
    }
    if (tracing.endpoint() == null) {
      p.add("spec.tracing.endpoint: required");
    } else {
      checkUrl("spec.tracing.endpoint", tracing.endpoint(), p);
    }
    Double ratio = tracing.samplingRatio();
    if (ratio != null && !(ratio >= 0 && ratio <= 1)) {
      p.add("spec.tracing.samplingRatio: " + ratio + " must be from 0 to 1");
    }
    if (tracing.headers() != null) {
      checkSecret("spec.tracing.headers", new SecretValue(null, null, tracing.headers()), p);
    }
  }

  private static void checkCallerLimits(String at, CallerLimitsSpec limits, List<String> p) {
    if (limits == null) {
      return;
    }
    checkRange(at + ".concurrentCalls", limits.concurrentCalls(), 100_000, p);
    checkRange(at + ".callsPerMinute", limits.callsPerMinute(), 1_000_000, p);
    Long tokens = limits.llmTokensPerHour();
    if (tokens != null && tokens < 1) {
      p.add(at + ".llmTokensPerHour: " + tokens + " must be at least 1");
    }
  }

  private static void checkRange(String at, Integer value, int max, List<String> p) {
    if (value != null && (value < 1 || value > max)) {
      p.add(at + ": " + value + " must be between 1 and " + max);
    }
  }

  private static void checkPeers(String at, List<NetworkPolicySpec.Peer> peers, List<String> p) {
    if (peers == null) {
      return;
    }
    if (peers.size() > 32) {
      p.add(at + ": at most 32 entries");
    }
    for (int i = 0; i < peers.size(); i++) {
      String namespace = peers.get(i).namespace();
      if (namespace != null
          && (!NAMESPACE.matcher(namespace).matches() || namespace.length() > 63)) {
        p.add(
            at
                + "["
                + i
                + "].namespace: '"
                + namespace
                + "' is neither a namespace's name (a DNS label) nor *");
      }
    }
  }

  private static void checkPort(String at, Integer port, List<String> p) {
    if (port != null && (port < 1 || port > 65535)) {
      p.add(at + ": " + port + " is not a port (1-65535)");
    }
  }

  private static void between(String at, Integer value, int min, int max, List<String> p) {
    if (value != null && (value < min || value > max)) {
      p.add(at + ": " + value + " must be between " + min + " and " + max);
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
    between(at + ".maxIterations", r.maxIterations(), 1, 1000, p);
    between(at + ".maxParallelToolCalls", r.maxParallelToolCalls(), 1, 1000, p);
  }
}
