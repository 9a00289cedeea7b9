package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.runtime.store.PostgresStore;
import ca.helu.pallas.runtime.store.StoreConfig;
import ca.helu.pallas.runtime.testing.FakeLlmServer;
import ca.helu.pallas.runtime.testing.HttpStatus;
import ca.helu.pallas.runtime.testing.PostgresServer;
import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.ResumableCalls;
import ca.helu.pallas.runtime.testing.RunningFleet;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A turn whose replica is killed outright (SIGKILL: no drain, as an OOM kill or a crash) is run
 * again by the replica its client resumes on (issue 17 §2, §5; docs/runtime.md, "Sessions"): the
 * client gets a progress message saying so, the turn's progress counting on from what it had, and
 * the result; the conversation holds the turn once.
 */
class TurnRerunIT {
  @RegisterExtension static final PostgresServer PG = new PostgresServer();
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final Path JAR = Path.of("target/pallas-agent-runtime.jar").toAbsolutePath();
  private static final String MANIFEST =
      """
      apiVersion: pallas.helu.ca/v1alpha1
      kind: PallasDeployment
      metadata: {name: rerun}
      spec:
        registry: {port: ${port:registry}}
        providers:
          openai: {baseUrl: "%s"}
        agents:
          - {name: talker, port: ${port:talker}, model: openai.m, instanceScope: connection}
      """;

  @TempDir Path dir;
  private FakeLlmServer llm;
  private Process killed;
  private final CountDownLatch never = new CountDownLatch(1);

  @BeforeEach
  void start() throws Exception {
    llm = FakeLlmServer.openAi("m");
    // the first replica's model call never answers: its turn is mid-way when the replica dies
    AtomicInteger calls = new AtomicInteger();
    llm.otherwise(() -> {
      if (calls.incrementAndGet() == 1) {
        try {
          never.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return llm.text("the answer, run again", 1, 1);
    });
  }

  @AfterEach
  void stop() throws InterruptedException {
    never.countDown();
    if (killed != null) {
      killed.destroyForcibly();
      killed.waitFor(30, TimeUnit.SECONDS);
    }
    llm.close();
  }

  @Test
  void aTurnWhoseReplicaIsKilledRunsAgainOnTheReplicaItsClientResumesOn() throws Exception {
    String url = PG.newDatabase();
    String manifest = MANIFEST.formatted(llm.baseUrl());
    String first = RunningFleet.withFreePorts(manifest);
    int firstPort = port(first);
    Files.writeString(dir.resolve("fleet.yaml"), first);
    killed = serve(url);
    await()
        .atMost(Duration.ofSeconds(60))
        .failFast("serve exited", () -> !killed.isAlive())
        .until(() -> HttpStatus.of("http://127.0.0.1:" + firstPort + "/readyz") == 200);

    try (RunningFleet second =
        RunningFleet.start(
            manifest,
            ca.helu.pallas.runtime.serve.DefaultAgentParts.Timings.DEFAULT,
            metrics ->
                new PostgresStore(
                    StoreConfig.of(url, PostgresServer.USER, PostgresServer.PASSWORD),
                    "rerun",
                    metrics::storeUp))) {
      RawMcp session = RawMcp.open("http://127.0.0.1:" + firstPort + "/mcp", null, "2025-11-25");
      List<ResumableCalls.Event> before =
          ResumableCalls.callAndLeave(firstPort, session.session(), 21, "go", "step 1");
      String lastId = before.getLast().id();
      List<Double> progress = new ArrayList<>();
      for (ResumableCalls.Event e : before.stream().filter(ResumableCalls.MESSAGE).toList()) {
        progress.add(JSON.readTree(e.data()).at("/params/progress").asDouble());
      }
      await().atMost(Duration.ofSeconds(10)).until(() -> llm.chatRequests().size() == 1);

      killed.destroyForcibly(); // SIGKILL: no drain, no goodbye to the store
      assertThat(killed.waitFor(30, TimeUnit.SECONDS)).isTrue();

      List<String> messages = new ArrayList<>();
      List<String> ids = new ArrayList<>();
      JsonNode result =
          resume(second.mcpUrl("talker"), session.session(), lastId, messages, ids, progress);

      assertThat(result).as("the call's result, from the replica it resumed on").isNotNull();
      assertThat(result.at("/content/0/text").asText()).isEqualTo("the answer, run again");
      assertThat(messages)
          .as("progress after the kill")
          .startsWith("talker: its replica stopped; the turn starts again", "talker step 1 (llm)");
      assertThat(progress)
          .as("progress over both replicas")
          .isSortedAccordingTo(Double::compare)
          .doesNotHaveDuplicates();
      long after = seq(lastId);
      assertThat(ids)
          .allMatch(i -> seq(i) > after)
          .isSortedAccordingTo((a, b) -> Long.compare(seq(a), seq(b)));
      assertThat(llm.chatRequests()).as("the killed turn's model call, and the rerun's").hasSize(2);

      // the conversation holds the turn once: the killed replica had stored nothing of it
      JsonNode history =
          session
              .at(second.mcpUrl("talker"))
              .request("prompts/get", Map.of("name", "talker_history"));
      assertThat(history.toString()).contains("the answer, run again");
      assertThat(history.get("messages")).as(history.toString()).hasSize(2);
    }
  }

  private Process serve(String url) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    if (Runtime.version().feature() >= 24) {
      command.add("--sun-misc-unsafe-memory-access=allow");
    }
    command.addAll(
        List.of("-Xmx256m", "-jar", JAR.toString(), "serve", "-f", "fleet.yaml", "--store", url));
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("serve.log").toFile());
    builder.environment().put("PALLAS_STORE_USERNAME", PostgresServer.USER);
    builder.environment().put("PALLAS_STORE_PASSWORD", PostgresServer.PASSWORD);
    return builder.start();
  }

  private static int port(String manifest) {
    Matcher m = Pattern.compile("name: talker, port: (\\d+)").matcher(manifest);
    assertThat(m.find()).isTrue();
    return Integer.parseInt(m.group(1));
  }

  /**
   * Resumes the stream after {@code lastId} on {@code url} and reads it to the call's result:
   * progress messages, event ids and progress values added to the lists.
   */
  private static JsonNode resume(
      String url,
      String session,
      String lastId,
      List<String> messages,
      List<String> ids,
      List<Double> progress)
      throws Exception {
    Iterator<String> lines = ResumableCalls.resume(url, session, lastId);
    while (lines.hasNext()) {
      String line = lines.next();
      if (line.startsWith("id: ")) {
        ids.add(line.substring(4));
      } else if (line.startsWith("data: ")) {
        JsonNode message = JSON.readTree(line.substring(6));
        if (message.path("method").asText().equals("notifications/progress")) {
          messages.add(message.at("/params/message").asText());
          progress.add(message.at("/params/progress").asDouble());
        } else if (message.path("id").asInt() == 21) {
          return message.get("result");
        }
      }
    }
    return null;
  }

  private static long seq(String eventId) {
    return ResumableCalls.seq(eventId);
  }
}
