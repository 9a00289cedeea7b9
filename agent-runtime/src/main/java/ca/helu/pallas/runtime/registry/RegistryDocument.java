package ca.helu.pallas.runtime.registry;

import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.AuthSpec;
import ca.helu.pallas.api.Icon;
import ca.helu.pallas.api.PallasDeploymentSpec;
import ca.helu.pallas.runtime.mcp.AgentCard;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.function.Function;

/**
 * Builds the registry's {@code /.well-known/mcp/server.json} (docs/contract.md, "Registry") for a
 * deployment: each agent's {@link AgentCard} with its URL.
 */
public final class RegistryDocument {
  public static final String SCHEMA =
      "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";
  private static final ObjectMapper JSON = new ObjectMapper();

  private RegistryDocument() {}

  /** server.json name: {namespace}/{agent name with _ replaced by -}. */
  public static String serverName(PallasDeploymentSpec spec, AgentSpec agent) {
    return spec.effectiveRegistry().effectiveNamespace() + "/" + agent.name().replace('_', '-');
  }

  /** What a client puts into the Authorization header, for a person reading the registry. */
  static String authorization(AuthSpec auth) {
    return auth.oidc() != null
        ? "Bearer <access token of "
            + auth.oidc().issuerUrl()
            + ">; the agent's /.well-known/oauth-protected-resource names the issuer and scopes"
        : "Bearer <static token>, as the fleet's operator issued it";
  }

  /**
   * The document's bytes.
   *
   * @param mcpUrl the streamable-http URL of each agent
   * @param updatedAt when this set of agents was loaded
   */
  public static byte[] render(
      PallasDeploymentSpec spec, Function<AgentSpec, String> mcpUrl, Instant updatedAt) {
    ObjectNode root = JSON.createObjectNode();
    root.set("servers", entries(spec, mcpUrl, updatedAt));
    try {
      return JSON.writeValueAsBytes(root);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * One entry per agent, {@code {"server": ..., "_meta": ...}}: what server.json lists and what the
   * MCP Registry API answers ({@link RegistryApi}).
   */
  static ArrayNode entries(
      PallasDeploymentSpec spec, Function<AgentSpec, String> mcpUrl, Instant updatedAt) {
    ArrayNode servers = JSON.createArrayNode();
    String updated = updatedAt.truncatedTo(ChronoUnit.SECONDS).toString();
    for (AgentSpec agent : spec.effectiveAgents()) {
      AgentCard card = AgentCard.of(spec, agent);
      ObjectNode entry = servers.addObject();
      ObjectNode server = entry.putObject("server");
      server.put("$schema", SCHEMA);
      server.put("name", serverName(spec, agent));
      server.put("title", card.title());
      server.put("description", card.description());
      server.put("version", card.version());
      if (!card.icons().isEmpty()) {
        ArrayNode icons = server.putArray("icons");
        for (Icon icon : card.icons()) {
          ObjectNode i = icons.addObject();
          i.put("src", icon.src());
          if (icon.mimeType() != null) {
            i.put("mimeType", icon.mimeType());
          }
          if (icon.sizes() != null && !icon.sizes().isEmpty()) {
            ArrayNode sizes = i.putArray("sizes");
            icon.sizes().forEach(sizes::add);
          }
        }
      }
      ObjectNode remote = server.putArray("remotes").addObject();
      remote.put("type", "streamable-http");
      remote.put("url", mcpUrl.apply(agent));
      if (spec.auth() != null) {
        // server.json 2025-12-11: the header a client must send (docs/contract.md, "Registry")
        ObjectNode header = remote.putArray("headers").addObject();
        header.put("name", "Authorization");
        header.put("description", authorization(spec.auth()));
        header.put("isRequired", true);
        header.put("isSecret", true);
      }
      ObjectNode capabilities = server.putObject("capabilities");
      capabilities.put("model", card.capabilities().model());
      capabilities.put("vision", card.capabilities().vision());
      capabilities.put("context_window", card.capabilities().contextWindow());
      capabilities.put("max_output_tokens", card.capabilities().maxOutputTokens());
      ObjectNode official =
          entry.putObject("_meta").putObject("io.modelcontextprotocol.registry/official");
      official.put("status", "active");
      official.put("updatedAt", updated);
      official.put("isLatest", true);
    }
    return servers;
  }
}
