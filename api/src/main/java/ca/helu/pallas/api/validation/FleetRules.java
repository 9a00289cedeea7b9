package ca.helu.pallas.api.validation;

import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.McpServerSpec;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasDeploymentSpec;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.api.RegistrySpec;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The rules across a fleet's entries: its name, unique names and ports, references that name
 * something, and what the fleet's auth allows (docs/crd-reference.md).
 */
final class FleetRules {
  /**
   * Token passthrough refused where the agents validate OIDC tokens: such a token's audience is the
   * agent, and the MCP authorization specification forbids passing it on (docs/runtime.md, "Bearer
   * propagation").
   */
  static final String FORWARDING_REFUSED =
      "forwardInboundAuth would pass callers' tokens, issued for this fleet's agents (spec.auth.oidc),"
          + " on to another server, which the MCP authorization specification forbids; give the"
          + " server a credential of its own (headers), or set spec.auth.oidc.allowForwarding: true";

  /** Token exchange trades callers' OIDC tokens, as the agents' own client of that issuer. */
  static final String EXCHANGE_NEEDS_CLIENT =
      "tokenExchange trades callers' tokens at the issuer of spec.auth.oidc, as the agents' own"
          + " client: it needs spec.auth.oidc with client (its id and secret)";

  private static final String METADATA_NAME = "^[a-z]([-a-z0-9]*[a-z0-9])?$";
  private static final Pattern METADATA_NAME_PATTERN = Pattern.compile(METADATA_NAME);
  private static final Pattern NAME = Pattern.compile(PallasNames.NAME_PATTERN);

  private static final String CEL_REGISTRY_PORT =
      "(has(self.registry) && has(self.registry.port) ? self.registry.port : "
          + RegistrySpec.DEFAULT_PORT
          + ")";

  private static String celPort(String agent) {
    return "(has("
        + agent
        + ".port) ? "
        + agent
        + ".port : "
        + CEL_REGISTRY_PORT
        + " + 1 + self.agents.indexOf("
        + agent
        + "))";
  }

  private FleetRules() {}

  // Every object is named {name}-{agent} or {name}-registry; a Service name is a DNS-1035 label.
  static final List<Rule> RULES =
      List.of(
          Rule.on(PallasDeployment.class)
              .cel("self.metadata.name.matches('" + METADATA_NAME + "')")
              .message(
                  "metadata.name must start with a letter and hold only lower-case letters, digits"
                      + " and '-' (it prefixes Service names)")
              .example(
                  "1fleet", "{defaultModel: passthrough, agents: [{name: a}]}", "metadata.name")
              .check((d, at, p) -> {
                if (d.name() != null && !METADATA_NAME_PATTERN.matcher(d.name()).matches()) {
                  p.add(
                      "metadata.name",
                      "'"
                          + d.name()
                          + "' must start with a letter and hold only lower-case letters, digits"
                          + " and '-' (it prefixes Service names)");
                }
              }),
          Rule.on(PallasDeployment.class)
              .cel("size(self.metadata.name) <= " + PallasNames.MAX_DEPLOYMENT_NAME)
              .message(
                  "metadata.name must be at most "
                      + PallasNames.MAX_DEPLOYMENT_NAME
                      + " characters ({name}-registry is a Service name of at most 63)")
              .example(
                  "a".repeat(PallasNames.MAX_DEPLOYMENT_NAME + 1),
                  "{defaultModel: passthrough, agents: [{name: a}]}",
                  "metadata.name")
              .check((d, at, p) -> {
                if (d.name() != null && d.name().length() > PallasNames.MAX_DEPLOYMENT_NAME) {
                  p.add(
                      "metadata.name",
                      "'"
                          + d.name()
                          + "' must be at most "
                          + PallasNames.MAX_DEPLOYMENT_NAME
                          + " characters ({name}-registry is a Service name of at most 63)");
                }
              }),
          Rule.on(PallasDeployment.class)
              .cel(
                  "!has(self.spec) || !has(self.spec.agents) || self.spec.agents.all(a,"
                      + " size(self.metadata.name) + 1 + size(a.name) <= 63)")
              .message(
                  "metadata.name-agents[].name must be at most 63 characters (it names the agent's"
                      + " Service)")
              .fieldPath(".spec.agents")
              .example(
                  "{defaultModel: passthrough, agents: [{name: " + "b".repeat(60) + "}]}",
                  "spec.agents")
              .check((d, at, p) -> {
                if (d.name() == null || d.getSpec() == null) {
                  return;
                }
                List<AgentSpec> agents = d.getSpec().effectiveAgents();
                for (int i = 0; i < agents.size(); i++) {
                  AgentSpec a = agents.get(i);
                  if (a != null
                      && a.name() != null
                      && d.name().length() + 1 + a.name().length() > 63) {
                    p.add(
                        "spec.agents[" + i + "].name",
                        "'"
                            + PallasNames.agentObject(d.name(), a.name())
                            + "' (the agent's Service) would be longer than 63 characters");
                  }
                }
              }),
          Rule.on(PallasDeploymentSpec.class)
              .cel(
                  "!has(self.agents) || self.agents.all(a, self.agents.exists_one(b,"
                      + " b.name.replace('_', '-') == a.name.replace('_', '-')))")
              .message(
                  "agents[].name must be unique, also with '_' read as '-' (both name one Service)")
              .fieldPath(".agents")
              .example(
                  "{defaultModel: passthrough, agents: [{name: a_b}, {name: a-b}]}", "spec.agents")
              .check(FleetRules::uniqueAgents),
          Rule.on(PallasDeploymentSpec.class)
              .cel(
                  "!has(self.mcpServers) || self.mcpServers.all(s, self.mcpServers.exists_one(t,"
                      + " t.name == s.name))")
              .message("mcpServers[].name must be unique")
              .fieldPath(".mcpServers")
              .example(
                  "{defaultModel: passthrough, agents: [{name: a}], mcpServers: [{name: s, url:"
                      + " 'http://s/mcp'}, {name: s, url: 'http://t/mcp'}]}",
                  "spec.mcpServers")
              .check((s, at, p) -> {
                Map<String, Integer> first = new HashMap<>();
                List<McpServerSpec> servers = s.effectiveMcpServers();
                for (int i = 0; i < servers.size(); i++) {
                  McpServerSpec server = servers.get(i);
                  if (server == null || !validName(server.name())) {
                    continue;
                  }
                  Integer earlier = first.putIfAbsent(server.name(), i);
                  if (earlier != null) {
                    p.add(
                        at + ".mcpServers[" + i + "].name",
                        "'" + server.name() + "' duplicates spec.mcpServers[" + earlier + "]");
                  }
                }
              }),
          Rule.on(PallasDeploymentSpec.class)
              .cel(
                  "!has(self.agents) || !has(self.mcpServers) || self.agents.all(a,"
                      + " !self.mcpServers.exists(s, s.name == a.name))")
              .message(
                  "an agent may not share its name with an mcpServers entry (servers lists could"
                      + " not tell them apart)")
              .fieldPath(".agents")
              .example(
                  "{defaultModel: passthrough, agents: [{name: a}], mcpServers: [{name: a, url:"
                      + " 'http://s/mcp'}]}",
                  "spec.agents")
              .check((s, at, p) -> {
                Map<String, Integer> servers = serverIndex(s);
                List<AgentSpec> agents = s.effectiveAgents();
                for (int i = 0; i < agents.size(); i++) {
                  AgentSpec a = agents.get(i);
                  if (a != null && servers.containsKey(a.name())) {
                    p.add(
                        at + ".agents[" + i + "].name",
                        "'"
                            + a.name()
                            + "' is also the name of spec.mcpServers["
                            + servers.get(a.name())
                            + "]; servers lists could not tell them apart");
                  }
                }
              }),
          Rule.on(PallasDeploymentSpec.class)
              .cel(
                  "!has(self.agents) || self.agents.all(a, self.agents.exists_one(b, "
                      + celPort("b")
                      + " == "
                      + celPort("a")
                      + "))")
              .message("agents[].port must be unique (a missing port is registry.port + 1 + index)")
              .fieldPath(".agents")
              .example(
                  "{defaultModel: passthrough, agents: [{name: a, port: 24202}, {name: b}]}",
                  "spec.agents")
              .check((s, at, p) -> {
                Map<Integer, Integer> first = new HashMap<>();
                List<AgentSpec> agents = s.effectiveAgents();
                for (int i = 0; i < agents.size(); i++) {
                  AgentSpec a = agents.get(i);
                  if (a == null) {
                    continue;
                  }
                  int port = s.portOf(a);
                  Integer earlier = first.putIfAbsent(port, i);
                  if (earlier != null) {
                    p.add(
                        at + ".agents[" + i + "].port",
                        port
                            + (a.port() == null ? " (the default, registry.port + 1 + index)" : "")
                            + " is already used by spec.agents["
                            + earlier
                            + "].port");
                  }
                }
              }),
          Rule.on(PallasDeploymentSpec.class)
              .cel(
                  "!has(self.agents) || self.agents.all(a, !has(a.port) || a.port != "
                      + CEL_REGISTRY_PORT
                      + ")")
              .message("no agent may listen on the registry port")
              .fieldPath(".agents")
              .example(
                  "{defaultModel: passthrough, registry: {port: 9000}, agents: [{name: a, port:"
                      + " 9000}]}",
                  "spec.agents")
              .check((s, at, p) -> {
                int registry = s.effectiveRegistry().effectivePort();
                List<AgentSpec> agents = s.effectiveAgents();
                for (int i = 0; i < agents.size(); i++) {
                  AgentSpec a = agents.get(i);
                  if (a != null && a.port() != null && a.port() == registry) {
                    p.add(
                        at + ".agents[" + i + "].port",
                        a.port() + " is already used by spec.registry.port");
                  }
                }
              }),
          Rule.on(PallasDeploymentSpec.class)
              .cel(
                  "!has(self.agents) || self.agents.all(a, !has(a.servers) || a.servers.all(s,"
                      + " self.agents.exists(b, b.name == s) || (has(self.mcpServers) &&"
                      + " self.mcpServers.exists(m, m.name == s))))")
              .message("agents[].servers must name entries of mcpServers or agents")
              .fieldPath(".agents")
              .example(
                  "{defaultModel: passthrough, agents: [{name: a, servers: [ghost]}]}",
                  "spec.agents")
              .check((s, at, p) ->
                  references(
                      s,
                      at,
                      "servers",
                      AgentSpec::effectiveServers,
                      "names no entry of spec.mcpServers or spec.agents",
                      true,
                      p)),
          Rule.on(PallasDeploymentSpec.class)
              .cel(
                  "!has(self.agents) || self.agents.all(a, !has(a.dependsOn) || a.dependsOn.all(d,"
                      + " self.agents.exists(b, b.name == d)))")
              .message("agents[].dependsOn must name entries of agents")
              .fieldPath(".agents")
              .example(
                  "{defaultModel: passthrough, agents: [{name: a, dependsOn: [ghost]}]}",
                  "spec.agents")
              .check((s, at, p) ->
                  references(
                      s,
                      at,
                      "dependsOn",
                      AgentSpec::effectiveDependsOn,
                      "names no entry of spec.agents",
                      false,
                      p)),
          Rule.on(PallasDeploymentSpec.class)
              .cel(
                  "!has(self.auth) || !has(self.auth.oidc) || (has(self.auth.oidc.allowForwarding)"
                      + " && self.auth.oidc.allowForwarding) || !has(self.mcpServers) ||"
                      + " !self.mcpServers.exists(s, has(s.forwardInboundAuth) &&"
                      + " s.forwardInboundAuth)")
              .message(FORWARDING_REFUSED)
              .fieldPath(".mcpServers")
              .example(
                  "{defaultModel: passthrough, auth: {oidc: {issuerUrl: 'https://k/realms/p'}},"
                      + " mcpServers: [{name: s, url: 'http://s:1/mcp', forwardInboundAuth: true}],"
                      + " agents: [{name: a, servers: [s]}]}",
                  "spec.mcpServers")
              .holds(s ->
                  s.auth() == null
                      || s.auth().oidc() == null
                      || s.auth().oidc().forwardingAllowed()
                      || s.effectiveMcpServers().stream()
                          .noneMatch(m -> m != null && m.effectiveForwardInboundAuth())),
          Rule.on(PallasDeploymentSpec.class)
              .cel(
                  "!has(self.mcpServers) || !self.mcpServers.exists(s, has(s.tokenExchange)) ||"
                      + " (has(self.auth) && has(self.auth.oidc) && has(self.auth.oidc.client))")
              .message(EXCHANGE_NEEDS_CLIENT)
              .fieldPath(".mcpServers")
              .example(
                  "{defaultModel: passthrough, auth: {oidc: {issuerUrl: 'https://k/realms/p'}},"
                      + " mcpServers: [{name: s, url: 'http://s:1/mcp', tokenExchange: {audience:"
                      + " s}}], agents: [{name: a, servers: [s]}]}",
                  "spec.mcpServers")
              .holds(s ->
                  s.effectiveMcpServers().stream()
                          .noneMatch(m -> m != null && m.tokenExchange() != null)
                      || s.auth() != null
                          && s.auth().oidc() != null
                          && s.auth().oidc().client() != null),
          Rule.on(PallasDeploymentSpec.class)
              .cel(
                  "has(self.defaultModel) || !has(self.agents) || self.agents.all(a, has(a.model))")
              .message("every agent needs a model when defaultModel is not set")
              .fieldPath(".agents")
              .example("{agents: [{name: a}]}", "spec.agents")
              .check((s, at, p) -> {
                List<AgentSpec> agents = s.effectiveAgents();
                for (int i = 0; i < agents.size(); i++) {
                  AgentSpec a = agents.get(i);
                  if (a != null && s.modelOf(a) == null) {
                    p.add(
                        at + ".agents[" + i + "].model",
                        "required when spec.defaultModel is not set");
                  }
                }
              }));

  private static boolean validName(String name) {
    return name != null && NAME.matcher(name).matches();
  }

  private static Map<String, Integer> serverIndex(PallasDeploymentSpec s) {
    Map<String, Integer> index = new LinkedHashMap<>();
    List<McpServerSpec> servers = s.effectiveMcpServers();
    for (int i = 0; i < servers.size(); i++) {
      if (servers.get(i) != null && validName(servers.get(i).name())) {
        index.putIfAbsent(servers.get(i).name(), i);
      }
    }
    return index;
  }

  private static void uniqueAgents(PallasDeploymentSpec s, String at, Problems p) {
    Map<String, Integer> first = new HashMap<>();
    Map<String, Integer> firstDns = new HashMap<>();
    List<AgentSpec> agents = s.effectiveAgents();
    for (int i = 0; i < agents.size(); i++) {
      AgentSpec a = agents.get(i);
      if (a == null || !validName(a.name())) {
        continue;
      }
      String field = at + ".agents[" + i + "].name";
      String dns = PallasNames.dnsName(a.name());
      Integer earlier = first.putIfAbsent(a.name(), i);
      if (earlier != null) {
        p.add(field, "'" + a.name() + "' duplicates spec.agents[" + earlier + "]");
      } else if ((earlier = firstDns.putIfAbsent(dns, i)) != null) {
        p.add(
            field,
            "'"
                + a.name()
                + "' and spec.agents["
                + earlier
                + "] both become '"
                + dns
                + "' in object names ('_' is read as '-')");
      }
    }
  }

  /** Each entry of each agent's {@code list} names an agent (or, {@code orServer}, a server). */
  private static void references(
      PallasDeploymentSpec s,
      String at,
      String list,
      java.util.function.Function<AgentSpec, List<String>> entries,
      String namesNothing,
      boolean orServer,
      Problems p) {
    Map<String, Integer> servers = serverIndex(s);
    List<AgentSpec> agents = s.effectiveAgents();
    for (int i = 0; i < agents.size(); i++) {
      AgentSpec a = agents.get(i);
      if (a == null) {
        continue;
      }
      List<String> refs = entries.apply(a);
      for (int j = 0; j < refs.size(); j++) {
        String ref = refs.get(j);
        // the agent itself is AgentRules' to report
        if (ref == null || ref.equals(a.name())) {
          continue;
        }
        boolean named =
            s.effectiveAgents().stream().anyMatch(b -> b != null && ref.equals(b.name()))
                || (orServer && servers.containsKey(ref));
        if (!named) {
          p.add(at + ".agents[" + i + "]." + list + "[" + j + "]", "'" + ref + "' " + namesNothing);
        }
      }
    }
  }
}
