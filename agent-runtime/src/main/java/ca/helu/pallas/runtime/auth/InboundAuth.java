package ca.helu.pallas.runtime.auth;

import ca.helu.pallas.api.AuthSpec;
import ca.helu.pallas.api.OidcAuthSpec;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.UnaryOperator;

/**
 * One agent's inbound authentication (docs/runtime.md, "Inbound authentication"), as {@code
 * spec.auth} chooses it: who may call, what a client without a token may still do ({@code
 * openHealth}), and the agent's Protected Resource Metadata (RFC 9728) that a 401 points to. Beside
 * its callers, the agents of its fleet that call it (and its registry, and the operator) present
 * identities of their own ({@link AgentTokens}; docs/runtime.md, "Agents calling agents").
 */
public final class InboundAuth {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** How long one request to the issuer (discovery, keys) may take. */
  static final Duration ISSUER_TIMEOUT = Duration.ofSeconds(5);

  /** The one tool of an agent a client without a token may call with openHealth. */
  static final String AGENT_OPEN_TOOL = "get_health";

  /** Path of the metadata document, and the path-suffixed form for the agent's /mcp (RFC 9728). */
  public static final String METADATA_PATH = "/.well-known/oauth-protected-resource";

  private final Authenticator authenticator;
  private final AgentTokens agents;
  private final OidcTokens oidc;
  private final boolean openHealth;
  private final String resource;
  private final String metadataUrl;
  private final List<String> scopes;
  private final String scope;
  private final byte[] metadata;
  private final Set<String> openTools;

  private InboundAuth(
      Authenticator authenticator,
      AgentTokens agents,
      OidcTokens oidc,
      boolean openHealth,
      String resource,
      List<String> scopes,
      byte[] metadata,
      Set<String> openTools) {
    this.openTools = Set.copyOf(openTools);
    this.authenticator = authenticator;
    this.agents = agents;
    this.oidc = oidc;
    this.openHealth = openHealth;
    this.resource = resource;
    this.metadataUrl = metadataUrl(resource);
    this.scopes = List.copyOf(scopes);
    this.scope = String.join(" ", scopes);
    this.metadata = metadata;
  }

  /**
   * The authentication of {@code agent}, or empty when {@code spec} is null (no inbound auth).
   *
   * @param resource the agent's MCP URL as its callers reach it: its resource identifier
   * @param staticTokens the tokens {@code serve} was given (--static-tokens), or null
   * @throws IllegalArgumentException when {@code spec} asks for static tokens and none were given,
   *     or tokens were given for a manifest that does not ask for them
   */
  public static Optional<InboundAuth> of(
      AuthSpec spec, String agent, String resource, StaticTokens staticTokens, AgentTokens agents) {
    check(spec, staticTokens);
    if (spec == null) {
      return Optional.empty();
    }
    ObjectNode document = JSON.createObjectNode();
    document.put("resource", resource);
    document.put("resource_name", agent);
    List<String> scopes = List.of();
    Authenticator authenticator;
    OidcTokens oidc = null;
    if (spec.oidc() != null) {
      OidcAuthSpec o = spec.oidc();
      scopes = o.effectiveRequiredScopes();
      oidc =
          new OidcTokens(
              o.issuerUrl(),
              o.audienceOf(agent, resource),
              new LinkedHashSet<>(scopes),
              ISSUER_TIMEOUT);
      authenticator = oidc;
      document.putArray("authorization_servers").add(IssuerMetadata.normalized(o.issuerUrl()));
      if (!scopes.isEmpty()) {
        var supported = document.putArray("scopes_supported");
        scopes.forEach(supported::add);
      }
    } else {
      authenticator = staticTokens;
    }
    document.putArray("bearer_methods_supported").add("header");
    byte[] bytes;
    try {
      bytes = JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(document);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
    return Optional.of(
        new InboundAuth(
            authenticator,
            agents,
            oidc,
            spec.effectiveOpenHealth(),
            resource,
            scopes,
            bytes,
            Set.of(AGENT_OPEN_TOOL)));
  }

  /**
   * Whether the manifest and the static tokens {@code serve} was given agree.
   *
   * @throws IllegalArgumentException naming what is missing or superfluous
   */
  public static void check(AuthSpec spec, StaticTokens staticTokens) {
    boolean wanted = spec != null && spec.staticTokens() != null;
    if (wanted && staticTokens == null) {
      throw new IllegalArgumentException(
          "spec.auth.staticTokens: serve needs the tokens: pass --static-tokens DIR or set"
              + " PALLAS_STATIC_TOKENS_DIR (one file per caller, as the Secret '"
              + spec.staticTokens().secretName()
              + "' mounted as a volume)");
    }
    if (!wanted && staticTokens != null) {
      throw new IllegalArgumentException(
          "--static-tokens (or PALLAS_STATIC_TOKENS_DIR) is given, but the manifest does not set"
              + " spec.auth.staticTokens");
    }
  }

  /** {@code https://host:port/.well-known/oauth-protected-resource/mcp} for a resource URL. */
  static String metadataUrl(String resource) {
    URI uri = URI.create(resource);
    String path = uri.getRawPath() == null ? "" : uri.getRawPath();
    return uri.getScheme() + "://" + uri.getRawAuthority() + METADATA_PATH + path;
  }

  /**
   * Who a request's Authorization header (and, from an agent of the fleet, the caller it carries)
   * says calls: a caller, or none for an observer (the operator, the registry), which may do what a
   * client without a token may with {@code openHealth}.
   *
   * @param header the request's headers by name
   * @throws AuthFailure when the request may not call
   */
  public Optional<Caller> authenticate(String authorization, UnaryOperator<String> header)
      throws AuthFailure {
    if (agents != null) {
      Optional<String> token = BearerTokens.of(authorization);
      Optional<AgentTokens.Identity> identity =
          token.isPresent() ? agents.identify(token.get()) : Optional.empty();
      if (identity.isPresent()) {
        return identity.get().isObserver()
            ? Optional.empty()
            : Optional.of(
                CarriedCaller.read(
                    identity.get().agent(header.apply(CarriedCaller.AGENT_HEADER)), header));
      }
    }
    return Optional.of(authenticator.authenticate(authorization));
  }

  /**
   * Whether a client without a token may initialize and call get_health (and what it needs for
   * that: notifications, ping, tools/list).
   */
  public boolean openHealth() {
    return openHealth;
  }

  /**
   * The tools a client without a token may call with openHealth, in order: an agent's get_health,
   * or what {@link #openingTools} set.
   */
  public List<String> openTools() {
    return openTools.stream().sorted().toList();
  }

  /** This authentication with {@code tools} open instead (the registry's discovery tools). */
  public InboundAuth openingTools(Set<String> tools) {
    return new InboundAuth(
        authenticator, agents, oidc, openHealth, resource, scopes, metadata, tools);
  }

  /** The agent's resource identifier: its MCP URL. */
  public String resource() {
    return resource;
  }

  /** Where the agent's Protected Resource Metadata is, for WWW-Authenticate. */
  public String metadataUrl() {
    return metadataUrl;
  }

  /** The scopes a token must carry, space-separated; empty when none are required. */
  public String scope() {
    return scope;
  }

  /** The Protected Resource Metadata document (RFC 9728 §2), as JSON. */
  public byte[] metadata() {
    return metadata.clone();
  }

  /** Why tokens cannot be validated now (the issuer or its keys unreachable), or empty. */
  public Optional<String> problem() {
    Optional<String> callers = oidc == null ? Optional.empty() : oidc.problem();
    return callers.isPresent() || agents == null ? callers : agents.problem();
  }

  /**
   * Reads the issuer's discovery document now if it has not been read (OIDC only), so that
   * get_health can tell an unreachable issuer before the first token comes; true when it has been.
   */
  public boolean discover() {
    boolean agentsKnown = !(agents instanceof ServiceAccountTokens sa) || sa.discover();
    return (oidc == null || oidc.discover()) && agentsKnown;
  }
}
