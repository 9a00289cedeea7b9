package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.runtime.testing.RunningFleet;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelcontextprotocol.json.schema.jackson2.DefaultJsonSchemaValidator;
import java.io.InputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The fleet through the MCP Registry API on the registry's port (issue 20 §3; docs/contract.md,
 * "Registry API"): the same entries as server.json, listed a page at a time with a cursor, searched
 * by name, and read one by one by name and version ({@code latest} too).
 */
class RegistryApiIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static RunningFleet fleet;

  @BeforeAll
  static void start() {
    fleet =
        RunningFleet.start(
            """
            apiVersion: pallas.helu.ca/v1alpha1
            kind: PallasDeployment
            metadata: {name: listed}
            spec:
              version: 2.1.0
              registry: {port: ${port:registry}, namespace: io.example.fleet}
              defaultModel: passthrough
              agents:
                - {name: alpha, port: ${port:alpha}}
                - {name: beta, port: ${port:beta}}
                - {name: gamma_ray, port: ${port:gamma}}
            """);
  }

  @AfterAll
  static void stop() {
    fleet.close();
  }

  private static HttpResponse<String> get(String path) throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create(fleet.registryBase() + path)).GET().build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static JsonNode json(String path) throws Exception {
    HttpResponse<String> response = get(path);
    assertThat(response.statusCode()).as(path).isEqualTo(200);
    assertThat(response.headers().firstValue("Content-Type")).hasValue("application/json");
    return JSON.readTree(response.body());
  }

  private static String encoded(String name) {
    return URLEncoder.encode(name, StandardCharsets.UTF_8);
  }

  /**
   * Every answer validates against the official registry's published response schemas
   * (src/test/resources/registry/server-registry-v0.1.schema.json, from its OpenAPI document), and
   * the check is not one that everything passes.
   */
  @Test
  void theAnswersFollowTheOfficialRegistrysPublishedSchema() throws Exception {
    Map<String, Object> schema;
    try (InputStream in =
        RegistryApiIT.class.getResourceAsStream("/registry/server-registry-v0.1.schema.json")) {
      schema = JSON.readValue(in, new TypeReference<Map<String, Object>>() {});
    }
    DefaultJsonSchemaValidator validator = new DefaultJsonSchemaValidator();
    for (String path :
        List.of(
            "/v0.1/servers",
            "/v0.1/servers?limit=1",
            "/v0.1/servers?search=beta&version=latest",
            "/v0.1/servers/" + encoded("io.example.fleet/gamma-ray") + "/versions",
            "/v0.1/servers/" + encoded("io.example.fleet/alpha") + "/versions/latest",
            "/v0.1/servers/" + encoded("io.example.fleet/alpha") + "/versions/2.1.0")) {
      JsonNode answer = json(path);
      var verdict = validator.validate(schema, JSON.convertValue(answer, Map.class));
      assertThat(verdict.valid()).as(path + ": " + verdict.errorMessage()).isTrue();
    }
    ObjectNode broken =
        (ObjectNode)
            json("/v0.1/servers/" + encoded("io.example.fleet/alpha") + "/versions/latest");
    ((ObjectNode) broken.get("server")).put("name", "no slash");
    assertThat(validator.validate(schema, JSON.convertValue(broken, Map.class)).valid()).isFalse();
  }

  @Test
  void theListIsServerJsonsEntriesAPageAtATime() throws Exception {
    JsonNode document = json("/.well-known/mcp/server.json");
    JsonNode all = json("/v0.1/servers");
    assertThat(all.get("servers")).isEqualTo(document.get("servers"));
    assertThat(all.at("/metadata/count").asInt()).isEqualTo(3);
    assertThat(all.at("/metadata/nextCursor").isMissingNode()).isTrue();

    List<String> names = new ArrayList<>();
    String cursor = null;
    do {
      JsonNode page =
          json("/v0.1/servers?limit=2" + (cursor == null ? "" : "&cursor=" + encoded(cursor)));
      page.get("servers").forEach(s -> names.add(s.at("/server/name").asText()));
      assertThat(page.at("/metadata/count").asInt()).isEqualTo(page.get("servers").size());
      cursor = page.at("/metadata/nextCursor").asText(null);
    } while (cursor != null);
    assertThat(names)
        .containsExactly(
            "io.example.fleet/alpha", "io.example.fleet/beta", "io.example.fleet/gamma-ray");

    assertThat(json("/v0.1/servers?search=GAMMA").at("/servers/0/server/name").asText())
        .isEqualTo("io.example.fleet/gamma-ray");
    assertThat(json("/v0.1/servers?version=latest").at("/metadata/count").asInt()).isEqualTo(3);
    assertThat(json("/v0.1/servers?version=9.9.9").at("/metadata/count").asInt()).isZero();
  }

  @Test
  void aServerIsReadByNameAndVersion() throws Exception {
    String beta = "/v0.1/servers/" + encoded("io.example.fleet/beta") + "/versions";
    JsonNode versions = json(beta);
    assertThat(versions.at("/metadata/count").asInt()).isEqualTo(1);
    JsonNode latest = json(beta + "/latest");
    assertThat(latest).isEqualTo(versions.at("/servers/0"));
    assertThat(latest.at("/server/name").asText()).isEqualTo("io.example.fleet/beta");
    assertThat(latest.at("/server/version").asText()).isEqualTo("2.1.0");
    assertThat(latest.at("/server/remotes/0/url").asText())
        .endsWith(":" + fleet.port("beta") + "/mcp");
    assertThat(latest.at("/_meta/io.modelcontextprotocol.registry~1official/isLatest").asBoolean())
        .isTrue();
    assertThat(json(beta + "/2.1.0")).isEqualTo(latest);
  }

  @Test
  void mistakesAreProblemsThatSayWhat() throws Exception {
    for (String[] c :
        new String[][] {
          {
            "/v0.1/servers/" + encoded("io.example.fleet/delta") + "/versions",
            "404",
            "Server not found"
          },
          {
            "/v0.1/servers/" + encoded("io.example.fleet/beta") + "/versions/1.0.0",
            "404",
            "Server version not found"
          },
          {"/v0.1/servers?limit=0", "422", "limit must be a number from 1 to 100"},
          {"/v0.1/servers?limit=x", "422", "limit must be a number from 1 to 100"},
          {"/v0.1/servers/x/y", "404", "no such resource: see GET /v0.1/servers"}
        }) {
      HttpResponse<String> response = get(c[0]);
      assertThat(response.statusCode()).as(c[0]).isEqualTo(Integer.parseInt(c[1]));
      assertThat(response.headers().firstValue("Content-Type"))
          .hasValue("application/problem+json");
      JsonNode problem = JSON.readTree(response.body());
      assertThat(problem.get("status").asInt()).isEqualTo(Integer.parseInt(c[1]));
      assertThat(problem.get("detail").asText()).isEqualTo(c[2]);
    }
    HttpResponse<String> post =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(fleet.registryBase() + "/v0.1/servers"))
                .POST(HttpRequest.BodyPublishers.ofString("{}"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(post.statusCode()).isEqualTo(405);
  }
}
