package ca.helu.pallas.runtime.testing;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real Keycloak for a test class (docs/development.md, "Keycloak"): the distribution Maven
 * fetched from Maven Central ({@code org.keycloak:keycloak-quarkus-dist}, the pom's {@code
 * keycloak.version}), unpacked once under {@code ~/.cache/pallas/keycloak/<version>}, started in
 * development mode on 127.0.0.1 (or an address of {@link #on}) and a free port, with an in-memory
 * database and the realm of {@code src/test/resources/keycloak/pallas-realm.json} (the callers'
 * clients {@code daedalus} and {@code stranger}, user {@code alice}; the agents' clients {@code
 * agent-helper} and {@code pallas-agents}, with standard token exchange; the servers' audiences
 * {@code tools} and {@code mcp-everything}), and as many more users as {@link #withUsers} asks. Its
 * first start in a new cache builds Keycloak for this machine (about 30 s on 2 cores); later ones
 * start in about 20 s.
 *
 * <p>{@code @RegisterExtension static final KeycloakServer KEYCLOAK = new KeycloakServer();}
 */
public final class KeycloakServer implements BeforeAllCallback, AfterAllCallback, AutoCloseable {
  public static final String REALM = "pallas";
  private static final String ADMIN = "admin";
  private static final String ADMIN_PASSWORD = "admin-password";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private final String host;
  private final int users;
  private Process process;
  private Path log;
  private int port;

  /** Keycloak on 127.0.0.1, with the realm's users alone. */
  public KeycloakServer() {
    this("127.0.0.1", 0);
  }

  private KeycloakServer(String host, int users) {
    this.host = host;
    this.users = users;
  }

  /**
   * Keycloak with {@code count} more users, {@link #user(int)}, each with the password {@link
   * #password(int)} (hashed with one iteration: test users, logged in by the hundred).
   */
  public KeycloakServer withUsers(int count) {
    return new KeycloakServer(host, count);
  }

  /** Keycloak listening on {@code address}, e.g. the real node's bridge (NodeCluster.NODE_IP). */
  public KeycloakServer on(String address) {
    return new KeycloakServer(address, users);
  }

  /** The name of the {@code i}th added user. */
  public static String user(int i) {
    return String.format("caller-%03d", i);
  }

  public static String password(int i) {
    return user(i) + "-password";
  }

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    Path home = distribution();
    Path imports = Files.createDirectories(home.resolve("data/import"));
    try (InputStream realm = resource("/keycloak/pallas-realm.json")) {
      Files.copy(realm, imports.resolve("pallas-realm.json"), StandardCopyOption.REPLACE_EXISTING);
    }
    port = RunningFleet.unboundPort();
    log = Files.createTempFile("keycloak", ".log");
    ProcessBuilder builder =
        new ProcessBuilder(
                home.resolve("bin/kc.sh").toString(),
                "start-dev",
                "--http-host=" + host,
                "--http-port=" + port,
                "--db=dev-mem",
                "--import-realm")
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
    builder.environment().put("JAVA_OPTS_KC_HEAP", "-Xms64m -Xmx512m");
    // the master realm's administrator, for adding users (withUsers)
    builder.environment().put("KC_BOOTSTRAP_ADMIN_USERNAME", ADMIN);
    builder.environment().put("KC_BOOTSTRAP_ADMIN_PASSWORD", ADMIN_PASSWORD);
    process = builder.start();
    try {
      await()
          .atMost(Duration.ofMinutes(4))
          .pollInterval(Duration.ofMillis(500))
          .until(() -> {
            if (!process.isAlive()) {
              throw new IllegalStateException("Keycloak exited:\n" + Files.readString(log));
            }
            return discoveryAnswers();
          });
    } catch (RuntimeException e) {
      afterAll(context);
      throw new IllegalStateException("Keycloak did not start; its log:\n" + tail(), e);
    }
    if (users > 0) {
      addUsers();
    }
  }

  /**
   * Adds the users of {@link #withUsers} through the admin API (the realm file, in the shared
   * distribution's import directory, stays as it is), hashed with one iteration: test users, logged
   * in by the hundred.
   */
  private void addUsers() throws IOException, InterruptedException {
    String admin =
        token(
            "http://" + host + ":" + port + "/realms/master/protocol/openid-connect/token",
            Map.of(
                "grant_type",
                "password",
                "client_id",
                "admin-cli",
                "username",
                ADMIN,
                "password",
                ADMIN_PASSWORD));
    String realm = "http://" + host + ":" + port + "/admin/realms/" + REALM;
    adminRequest(
        admin,
        realm,
        "PUT",
        "{\"passwordPolicy\": \"hashAlgorithm(pbkdf2-sha256) and hashIterations(1)\"}");
    ObjectNode partial = JSON.createObjectNode().put("ifResourceExists", "SKIP");
    ArrayNode list = partial.putArray("users");
    for (int i = 0; i < users; i++) {
      ObjectNode user = list.addObject();
      user.put("username", user(i)).put("enabled", true);
      user.put("email", user(i) + "@pallas.test").put("emailVerified", true);
      user.put("firstName", "Caller").put("lastName", Integer.toString(i));
      user.putArray("credentials")
          .addObject()
          .put("type", "password")
          .put("value", password(i))
          .put("temporary", false);
    }
    adminRequest(admin, realm + "/partialImport", "POST", JSON.writeValueAsString(partial));
  }

  private static void adminRequest(String token, String url, String method, String json)
      throws IOException, InterruptedException {
    HttpResponse<String> response =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(url))
                .header("Authorization", "Bearer " + token)
                .header("Content-Type", "application/json")
                .method(method, HttpRequest.BodyPublishers.ofString(json))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() / 100 != 2) {
      throw new IllegalStateException(
          "Keycloak's admin API refused " + method + " " + url + ": " + response.body());
    }
  }

  /**
   * Starts it outside a test class's extensions, e.g. once the real node's bridge it listens on
   * exists; {@link #close()} stops it.
   */
  public KeycloakServer start() throws Exception {
    beforeAll(null);
    return this;
  }

  @Override
  public void close() throws Exception {
    afterAll(null);
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    if (process != null) {
      process.descendants().forEach(ProcessHandle::destroy);
      process.destroy();
      if (!process.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly().waitFor();
      }
      process = null;
    }
  }

  /** The realm's issuer identifier, as its tokens' {@code iss}. */
  public String issuer() {
    return "http://" + host + ":" + port + "/realms/" + REALM;
  }

  /** An access token of a confidential client, by the client credentials grant. */
  public String clientToken(String client, String secret) {
    return token(
        Map.of("grant_type", "client_credentials", "client_id", client, "client_secret", secret));
  }

  /** An access token of a user, through a client allowed the password grant. */
  public String userToken(String client, String secret, String user, String password) {
    Map<String, String> form = new LinkedHashMap<>();
    form.put("grant_type", "password");
    form.put("client_id", client);
    form.put("client_secret", secret);
    form.put("username", user);
    form.put("password", password);
    form.put("scope", "openid");
    return token(form);
  }

  private String token(Map<String, String> form) {
    return token(issuer() + "/protocol/openid-connect/token", form);
  }

  private static String token(String endpoint, Map<String, String> form) {
    String body =
        form.entrySet().stream()
            .map(e -> e.getKey() + "=" + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8))
            .collect(Collectors.joining("&"));
    try {
      HttpResponse<String> response =
          HTTP.send(
              HttpRequest.newBuilder(URI.create(endpoint))
                  .header("Content-Type", "application/x-www-form-urlencoded")
                  .POST(HttpRequest.BodyPublishers.ofString(body))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        throw new IllegalStateException(
            "Keycloak refused a token: HTTP " + response.statusCode() + " " + response.body());
      }
      return JSON.readTree(response.body()).path("access_token").asText();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private boolean discoveryAnswers() {
    try {
      return HTTP.send(
                  HttpRequest.newBuilder(URI.create(issuer() + "/.well-known/openid-configuration"))
                      .timeout(Duration.ofSeconds(5))
                      .build(),
                  HttpResponse.BodyHandlers.discarding())
              .statusCode()
          == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private String tail() {
    try {
      String all = Files.readString(log);
      return all.length() <= 8000 ? all : all.substring(all.length() - 8000);
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  /**
   * The unpacked distribution, unpacked on first use from the zip Maven fetched (the failsafe
   * configuration names it: pallas.keycloak.dist).
   */
  private static synchronized Path distribution() throws IOException {
    String version = System.getProperty("pallas.keycloak.version");
    String zip = System.getProperty("pallas.keycloak.dist");
    if (version == null || zip == null || !Files.isRegularFile(Path.of(zip))) {
      throw new IllegalStateException(
          "the Keycloak distribution is not where Maven puts it (pallas.keycloak.dist="
              + zip
              + "); run the tests through Maven");
    }
    Path cache = Path.of(System.getProperty("user.home"), ".cache", "pallas", "keycloak");
    Path home = cache.resolve(version);
    if (Files.isRegularFile(home.resolve("bin/kc.sh"))) {
      return home;
    }
    Files.createDirectories(cache);
    Path partial = Files.createTempDirectory(cache, version + ".partial");
    try (ZipInputStream in = new ZipInputStream(Files.newInputStream(Path.of(zip)))) {
      for (ZipEntry entry; (entry = in.getNextEntry()) != null; ) {
        // the zip's one top directory (keycloak-<version>/) is left out
        String name = entry.getName().substring(entry.getName().indexOf('/') + 1);
        Path target = partial.resolve(name).normalize();
        if (name.isEmpty() || !target.startsWith(partial)) {
          continue;
        }
        if (entry.isDirectory()) {
          Files.createDirectories(target);
        } else {
          Files.createDirectories(target.getParent());
          Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
          if (name.endsWith(".sh")) {
            target.toFile().setExecutable(true);
          }
        }
      }
    } catch (IOException | RuntimeException e) {
      deleteTree(partial);
      throw e;
    }
    Files.move(partial, home, StandardCopyOption.ATOMIC_MOVE);
    return home;
  }

  private static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> all = Files.walk(dir)) {
      for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  private static InputStream resource(String name) {
    InputStream in = KeycloakServer.class.getResourceAsStream(name);
    if (in == null) {
      throw new IllegalStateException("missing test resource " + name);
    }
    return in;
  }
}
