package ca.helu.pallas.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * Every field of a spec that holds a secret or names a Secret (docs/crd-reference.md, "Secrets"):
 * the one walk the operator uses for the Secrets it watches, the keys each pod gets, and the inline
 * values it moves out of the ConfigMap; the runtime resolves the same fields ({@code Secrets}). A
 * new field that holds a secret is added here and nowhere else.
 */
public final class SecretFields {
  /**
   * A field holding a secret value.
   *
   * @param field its path, for messages: {@code spec.mcpServers[0].headers[1].valueFrom}
   * @param pointer its JSON pointer in the spec
   * @param inlineKey the key an inline value is kept under in the fleet's Secret {@code X-inline}
   * @param usedBy the agents whose pods need it
   * @param usedByRegistry whether the registry's pod needs it too: the header of a server some
   *     agent calls, which the registry's call_tool calls as that agent would (docs/runtime.md,
   *     "The registry's MCP endpoint")
   */
  public record Value(
      String field,
      String pointer,
      String inlineKey,
      SecretValue value,
      Predicate<AgentSpec> usedBy,
      boolean usedByRegistry) {}

  private SecretFields() {}

  /**
   * The fields holding a secret value, set ones only: providers' keys, servers' headers, the
   * agents' OIDC client, tracing.
   */
  public static List<Value> values(PallasDeploymentSpec spec) {
    List<Value> out = new ArrayList<>();
    for (Provider p : Provider.values()) {
      ProviderSpec section = p.of(spec);
      if (section != null && section.apiKey() != null) {
        out.add(
            new Value(
                p.field() + ".apiKey",
                "/providers/" + p.id() + "/apiKey",
                "providers." + p.id() + ".apiKey",
                section.apiKey(),
                a -> Provider.ofModel(spec.modelOf(a)).filter(p::equals).isPresent(),
                false));
      }
    }
    List<McpServerSpec> servers = spec.effectiveMcpServers();
    for (int i = 0; i < servers.size(); i++) {
      McpServerSpec server = servers.get(i);
      Predicate<AgentSpec> calls = a -> a.effectiveServers().contains(server.name());
      // the registry indexes, and so may call, the servers of the agents only
      boolean called = spec.effectiveAgents().stream().anyMatch(calls);
      List<HeaderSpec> headers = server.effectiveHeaders();
      for (int h = 0; h < headers.size(); h++) {
        if (headers.get(h).valueFrom() != null) {
          out.add(
              new Value(
                  "spec.mcpServers[" + i + "].headers[" + h + "].valueFrom",
                  "/mcpServers/" + i + "/headers/" + h + "/valueFrom",
                  "mcpServers." + server.name() + ".headers." + h,
                  headers.get(h).valueFrom(),
                  calls,
                  called));
        }
      }
    }
    OAuthClientSpec client =
        spec.auth() == null || spec.auth().oidc() == null ? null : spec.auth().oidc().client();
    if (client != null && client.secret() != null) {
      // the agents' own client: only the pods of agents that exchange tokens with it get it
      // (docs/runtime.md, "Downstream credentials"), and the registry's, whose call_tool exchanges
      // as they do; never inline (validation.Rules)
      Predicate<AgentSpec> exchanges =
          a ->
              servers.stream()
                  .anyMatch(
                      s -> s.tokenExchange() != null && a.effectiveServers().contains(s.name()));
      out.add(
          new Value(
              "spec.auth.oidc.client.secret",
              "/auth/oidc/client/secret",
              "auth.oidc.client.secret",
              client.secret(),
              exchanges,
              spec.effectiveAgents().stream().anyMatch(exchanges)));
    }
    if (spec.tracing() != null && spec.tracing().headers() != null) {
      // only ever a Secret key: an exporter's token never sits in the manifest
      out.add(
          new Value(
              "spec.tracing.headers",
              "/tracing/headers",
              null,
              new SecretValue(null, null, spec.tracing().headers()),
              a -> true,
              false));
    }
    return out;
  }

  /**
   * Names of the Secrets a spec references: by {@code secretKeyRef}, and whole (the conversation
   * store's {@code spec.store.secretName}, the static tokens' {@code
   * spec.auth.staticTokens.secretName}).
   */
  public static Set<String> secretNames(PallasDeploymentSpec spec) {
    Set<String> names = new TreeSet<>();
    values(spec).stream()
        .map(Value::value)
        .filter(v -> v.secretKeyRef() != null)
        .forEach(v -> names.add(v.secretKeyRef().name()));
    if (spec.store() != null && spec.store().secretName() != null) {
      names.add(spec.store().secretName());
    }
    if (spec.auth() != null
        && spec.auth().staticTokens() != null
        && spec.auth().staticTokens().secretName() != null) {
      names.add(spec.auth().staticTokens().secretName());
    }
    return names;
  }

  /**
   * The spec with every inline value replaced by a key of Secret {@code secret}, each value put
   * into {@code moved} under its key.
   */
  public static PallasDeploymentSpec withoutInlineValues(
      PallasDeploymentSpec spec, String secret, Map<String, String> moved) {
    List<Value> inline = values(spec).stream().filter(v -> v.value().value() != null).toList();
    if (inline.isEmpty()) {
      return spec;
    }
    ObjectMapper json = ManifestParser.yamlMapper();
    ObjectNode tree = json.valueToTree(spec);
    for (Value v : inline) {
      moved.put(v.inlineKey(), v.value().value());
      int slash = v.pointer().lastIndexOf('/');
      ((ObjectNode) tree.at(v.pointer().substring(0, slash)))
          .set(
              v.pointer().substring(slash + 1),
              json.valueToTree(
                  new SecretValue(
                      null, null, new SecretValue.SecretKeyRef(secret, v.inlineKey()))));
    }
    try {
      return json.treeToValue((JsonNode) tree, PallasDeploymentSpec.class);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot rewrite the spec's inline secrets", e);
    }
  }
}
