package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.ManifestParser;
import ca.helu.pallas.runtime.testing.HttpStatus;
import ca.helu.pallas.runtime.testing.PostgresServer;
import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code serve --store} and {@code history delete} as users run them (issue 17 §1): the packaged
 * jar in its own JVM, the store's credentials from the environment only. A shared agent's
 * conversation outlives the process; DELETE of a session deletes its history; the admin command
 * deletes a session's history or all of an agent's; the password is in no output.
 */
class StoreCliIT {
  @RegisterExtension static final PostgresServer PG = new PostgresServer();
  private static final Path JAR = Path.of("target/pallas-agent-runtime.jar").toAbsolutePath();

  @TempDir Path dir;
  private String url;
  private Path file;
  private int shared;
  private int connection;

  @BeforeEach
  void setUp() throws Exception {
    url = PG.newDatabase();
    file = dir.resolve("deployment.yaml");
    Files.writeString(
        file,
        RunningFleet.withFreePorts(
            """
            apiVersion: pallas.helu.ca/v1alpha1
            kind: PallasDeployment
            metadata: {name: durable}
            spec:
              registry: {port: ${port:registry}}
              defaultModel: passthrough
              agents:
                - {name: s, port: ${port:s}, instanceScope: shared}
                - {name: c, port: ${port:c}, instanceScope: connection}
            """));
    var spec = ManifestParser.read(file).getSpec();
    shared = spec.portOf(spec.agent("s").orElseThrow());
    connection = spec.portOf(spec.agent("c").orElseThrow());
  }

  private Process run(String log, String... args) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    if (Runtime.version().feature() >= 24) {
      command.add("--sun-misc-unsafe-memory-access=allow");
    }
    command.addAll(List.of("-Xmx256m", "-jar", JAR.toString()));
    command.addAll(List.of(args));
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve(log).toFile());
    builder.environment().put("PALLAS_STORE_USERNAME", PostgresServer.USER);
    builder.environment().put("PALLAS_STORE_PASSWORD", PostgresServer.PASSWORD);
    return builder.start();
  }

  private Process serve(String log) throws Exception {
    Process p = run(log, "serve", "-f", file.toString(), "--store", url);
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> {
          if (!p.isAlive()) {
            throw new AssertionError("serve exited:\n" + Files.readString(dir.resolve(log)));
          }
          return HttpStatus.of("http://127.0.0.1:" + shared + "/readyz") == 200
              && HttpStatus.of("http://127.0.0.1:" + connection + "/readyz") == 200;
        });
    return p;
  }

  private static void stop(Process p) throws InterruptedException {
    p.destroy(); // SIGTERM: drains, then closes the store
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
  }

  private static String mcp(int port) {
    return "http://127.0.0.1:" + port + "/mcp";
  }

  private static List<String> history(RawMcp session, String agent) throws Exception {
    JsonNode result = session.request("prompts/get", Map.of("name", agent + "_history"));
    List<String> texts = new ArrayList<>();
    result.path("messages").forEach(m -> texts.add(m.path("content").path("text").asText()));
    return texts;
  }

  @Test
  void historiesOutliveTheProcessAndAreDeletedOnRequest() throws Exception {
    Process first = serve("first.log");
    RawMcp one = RawMcp.open(mcp(shared), null);
    assertThat(RawMcp.text(one.callTool("send_message", Map.of("message", "remember me"))))
        .isEqualTo("remember me");
    RawMcp kept = RawMcp.open(mcp(connection), null);
    kept.callTool("send_message", Map.of("message", "kept"));
    RawMcp deleted = RawMcp.open(mcp(connection), null);
    deleted.callTool("send_message", Map.of("message", "deleted"));
    assertThat(count("SELECT count(*) FROM pallas_conversation")).isEqualTo(3);
    // DELETE of a session deletes its history (privacy)
    assertThat(deleted.delete()).isLessThan(300);
    assertThat(count("SELECT count(*) FROM pallas_conversation")).isEqualTo(2);
    stop(first);

    Process second = serve("second.log");
    try {
      RawMcp again = RawMcp.open(mcp(shared), null);
      assertThat(history(again, "s")).containsExactly("remember me", "remember me");
    } finally {
      stop(second);
    }

    // one session's history, then all of the shared agent's
    Process bySession =
        run(
            "delete-session.log",
            "history",
            "delete",
            "--store",
            url,
            "--deployment",
            "durable",
            "--agent",
            "c",
            "--session",
            kept.session());
    assertThat(bySession.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(bySession.exitValue()).isZero();
    assertThat(Files.readString(dir.resolve("delete-session.log")))
        .contains("deleted 1 conversation of agent c in durable from PostgreSQL 127.0.0.1:");
    Process all =
        run(
            "delete-all.log",
            "history",
            "delete",
            "--deployment",
            "durable",
            "--agent",
            "s",
            "--all",
            "--store=" + url);
    assertThat(all.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(all.exitValue()).isZero();
    assertThat(count("SELECT count(*) FROM pallas_conversation")).isZero();
    assertThat(count("SELECT count(*) FROM pallas_turn")).isZero();

    for (String log : List.of("first.log", "second.log", "delete-session.log", "delete-all.log")) {
      assertThat(Files.readString(dir.resolve(log)))
          .as(log)
          .doesNotContain(PostgresServer.PASSWORD)
          .doesNotContain("\tat ");
    }
    assertThat(Files.readString(dir.resolve("first.log")))
        .contains("conversation histories: PostgreSQL 127.0.0.1:" + PG.port());
  }

  /**
   * Two fleets of one name in two namespaces (the manifests the operator renders carry their
   * namespace) on one database keep their conversations apart, and `history delete --namespace`
   * deletes one namespace's only.
   */
  @Test
  void fleetsOfOneNameInTwoNamespacesKeepTheirConversationsApart() throws Exception {
    String local = Files.readString(file);
    for (String namespace : List.of("team-a", "team-b")) {
      Files.writeString(
          file,
          local.replace(
              "metadata: {name: durable}",
              "metadata: {name: durable, namespace: " + namespace + "}"));
      Process p = serve(namespace + ".log");
      try {
        RawMcp session = RawMcp.open(mcp(shared), null);
        session.callTool("send_message", Map.of("message", "in " + namespace));
        assertThat(history(session, "s")).containsExactly("in " + namespace, "in " + namespace);
      } finally {
        stop(p);
      }
    }
    assertThat(count("SELECT count(*) FROM pallas_conversation")).isEqualTo(2);

    Process delete =
        run(
            "delete-namespace.log",
            "history",
            "delete",
            "--store",
            url,
            "--namespace",
            "team-a",
            "--deployment",
            "durable",
            "--agent",
            "s",
            "--all");
    assertThat(delete.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(Files.readString(dir.resolve("delete-namespace.log")))
        .contains("deleted 1 conversation of agent s in team-a/durable from PostgreSQL");
    assertThat(
            count("SELECT count(*) FROM pallas_conversation WHERE deployment = 'team-b/durable'"))
        .isEqualTo(1);
    assertThat(count("SELECT count(*) FROM pallas_conversation")).isEqualTo(1);
  }

  @Test
  void aStoreUrlWithAPasswordIsRefused() throws Exception {
    Process p = run("refused.log", "serve", "-f", file.toString(), "--store", url + "?password=x1");
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).isEqualTo(2);
    assertThat(Files.readString(dir.resolve("refused.log")))
        .contains("must not hold a password: set PALLAS_STORE_PASSWORD")
        .doesNotContain("x1");
  }

  private long count(String query) throws Exception {
    try (Connection c =
            DriverManager.getConnection(url, PostgresServer.USER, PostgresServer.PASSWORD);
        Statement s = c.createStatement();
        ResultSet r = s.executeQuery(query)) {
      r.next();
      return r.getLong(1);
    }
  }
}
