package ca.helu.pallas.api.validation;

import ca.helu.pallas.api.AuthSpec;
import ca.helu.pallas.api.HeaderSpec;
import ca.helu.pallas.api.McpServerSpec;
import ca.helu.pallas.api.OAuthClientSpec;
import ca.helu.pallas.api.OidcAuthSpec;
import ca.helu.pallas.api.ProviderSpec;
import ca.helu.pallas.api.SecretValue;
import ca.helu.pallas.api.TokenExchangeSpec;
import ca.helu.pallas.api.TracingSpec;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;
import java.util.stream.Stream;

/**
 * The rules of single values: URLs, secrets, headers, the one auth mode, and a server's one
 * credential.
 */
final class ValueRules {
  private ValueRules() {}

  /** The agents' client secret is never stored in the resource. */
  static final String INLINE_CLIENT_SECRET =
      "an inline client secret is not accepted: give it by secretKeyRef (or env, with serve)";

  static final List<Rule> RULES =
      List.of(
          httpUrl(McpServerSpec.class, "url")
              .example(
                  "{defaultModel: passthrough, agents: [{name: a}], mcpServers: [{name: s, url:"
                      + " 'ftp://s/mcp'}]}",
                  "spec.mcpServers[0].url")
              .check(ValueRules::checkUrl),
          httpUrl(ProviderSpec.class, "baseUrl")
              .example(
                  "{defaultModel: passthrough, agents: [{name: a}], providers: {openai: {baseUrl:"
                      + " 'llm:8080/v1'}}}",
                  "spec.providers.openai.baseUrl")
              .check(ValueRules::checkUrl),
          httpUrl(OidcAuthSpec.class, "issuerUrl")
              .example(
                  "{defaultModel: passthrough, agents: [{name: a}], auth: {oidc: {issuerUrl:"
                      + " 'keycloak/realms/p'}}}",
                  "spec.auth.oidc.issuerUrl")
              .check(ValueRules::checkUrl),
          httpUrl(TracingSpec.class, "endpoint")
              .example(
                  "{defaultModel: passthrough, agents: [{name: a}], tracing: {endpoint:"
                      + " 'http:///v1'}}",
                  "spec.tracing.endpoint")
              .check(ValueRules::checkUrl),
          Rule.on(SecretValue.class)
              .cel(
                  "(has(self.value) ? 1 : 0) + (has(self.env) ? 1 : 0) + (has(self.secretKeyRef) ?"
                      + " 1 : 0) == 1")
              .message("set exactly one of value, env and secretKeyRef")
              .example(
                  "{defaultModel: passthrough, agents: [{name: a}], providers: {openai: {apiKey:"
                      + " {env: KEY, value: inline}}}}",
                  "spec.providers.openai.apiKey")
              .holds(s ->
                  Stream.of(s.value(), s.env(), s.secretKeyRef()).filter(v -> v != null).count()
                      == 1),
          Rule.on(HeaderSpec.class)
              .cel("has(self.value) != has(self.valueFrom)")
              .message("set exactly one of value and valueFrom")
              .example(
                  "{defaultModel: passthrough, agents: [{name: a}], mcpServers: [{name: s, url:"
                      + " 'http://s/mcp', headers: [{name: X-A}]}]}",
                  "spec.mcpServers[0].headers[0]")
              .holds(h -> (h.value() == null) != (h.valueFrom() == null)),
          Rule.on(AuthSpec.class)
              .cel("(has(self.oidc) ? 1 : 0) + (has(self.staticTokens) ? 1 : 0) == 1")
              .message("set exactly one of oidc and staticTokens")
              .example(
                  "{defaultModel: passthrough, agents: [{name: a}], auth: {openHealth: false}}",
                  "spec.auth")
              .holds(a -> (a.oidc() == null) != (a.staticTokens() == null)),
          // the downstream credentials (docs/runtime.md, "Downstream credentials")
          httpUrl(TokenExchangeSpec.class, "resource")
              .example(
                  "{defaultModel: passthrough, agents: [{name: a, servers: [s]}], auth: {oidc:"
                      + " {issuerUrl: 'https://k/realms/p', client: {id: c, secret: {env: S}}}},"
                      + " mcpServers: [{name: s, url: 'http://s/mcp', tokenExchange: {resource:"
                      + " 'tools'}}]}",
                  "spec.mcpServers[0].tokenExchange.resource")
              .check(ValueRules::checkUrl),
          Rule.on(TokenExchangeSpec.class)
              .cel("has(self.audience) || has(self.resource)")
              .message("set audience, resource or both: whom the exchanged token is for")
              .example(
                  "{defaultModel: passthrough, agents: [{name: a, servers: [s]}], auth: {oidc:"
                      + " {issuerUrl: 'https://k/realms/p', client: {id: c, secret: {env: S}}}},"
                      + " mcpServers: [{name: s, url: 'http://s/mcp', tokenExchange: {scopes:"
                      + " [s]}}]}",
                  "spec.mcpServers[0].tokenExchange")
              .holds(x -> x.audience() != null || x.resource() != null),
          Rule.on(McpServerSpec.class)
              .cel(
                  "!has(self.tokenExchange) || !has(self.forwardInboundAuth) ||"
                      + " !self.forwardInboundAuth")
              .message("set at most one of tokenExchange and forwardInboundAuth")
              .example(
                  "{defaultModel: passthrough, agents: [{name: a, servers: [s]}], auth: {oidc:"
                      + " {issuerUrl: 'https://k/realms/p', allowForwarding: true, client: {id: c,"
                      + " secret: {env: S}}}}, mcpServers: [{name: s, url: 'http://s/mcp',"
                      + " forwardInboundAuth: true, tokenExchange: {audience: s}}]}",
                  "spec.mcpServers[0]")
              .holds(m -> m.tokenExchange() == null || !m.effectiveForwardInboundAuth()),
          Rule.on(McpServerSpec.class)
              .cel(
                  "!has(self.tokenExchange) || !has(self.headers) || !self.headers.exists(h,"
                      + " h.name.lowerAscii() == 'authorization')")
              .message(
                  "tokenExchange sends the exchanged token as the Authorization header: headers"
                      + " may not set one too")
              .example(
                  "{defaultModel: passthrough, agents: [{name: a, servers: [s]}], auth: {oidc:"
                      + " {issuerUrl: 'https://k/realms/p', client: {id: c, secret: {env: S}}}},"
                      + " mcpServers: [{name: s, url: 'http://s/mcp', tokenExchange: {audience: s},"
                      + " headers: [{name: authorization, value: x}]}]}",
                  "spec.mcpServers[0]")
              .holds(m ->
                  m.tokenExchange() == null
                      || m.effectiveHeaders().stream()
                          .noneMatch(h -> h != null && "authorization".equalsIgnoreCase(h.name()))),
          Rule.on(OAuthClientSpec.class)
              .cel("!has(self.secret) || !has(self.secret.value)")
              .message(INLINE_CLIENT_SECRET)
              .fieldPath(".secret")
              .example(
                  "{defaultModel: passthrough, agents: [{name: a}], auth: {oidc: {issuerUrl:"
                      + " 'https://k/realms/p', client: {id: c, secret: {value: hunter2}}}}}",
                  "spec.auth.oidc.client.secret")
              .holds(c -> c.secret() == null || c.secret().value() == null));

  /** The CEL form of {@link #checkUrl}. */
  private static final String CEL_HTTP_URL =
      "isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHostname() != ''";

  private static Rule.Builder<String> httpUrl(Class<?> type, String field) {
    return Rule.onField(type, field)
        .cel(CEL_HTTP_URL)
        .message("must be an http:// or https:// URL with a host");
  }

  private static void checkUrl(String url, String at, Problems p) {
    try {
      URI uri = new URI(url);
      if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))
          || uri.getHost() == null) {
        p.add(at, "'" + url + "' must be an http:// or https:// URL with a host");
      }
    } catch (URISyntaxException e) {
      p.add(at, "'" + url + "' is not a URL (" + e.getReason() + ")");
    }
  }
}
