package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.runtime.testing.FakeLlmServer;
import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An agent in the memory its pod has (issue 16 §1; docs/runtime.md, "Memory"): the packaged jar
 * with the image's JVM options (read from this module's pom.xml, where Jib takes them), and {@code
 * -XX:MaxRAM=512m} for the operator's default memory limit of 512Mi. Its limits are derived from
 * that heap: no request inside them takes it down, a larger one is refused by name, and a thousand
 * slow calls are all in flight at once.
 */
class PodMemoryIT {
  private static final Path JAR = Path.of("target/pallas-agent-runtime.jar").toAbsolutePath();
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private static final Pattern LIMIT = Pattern.compile("at most ([0-9.]+) MiB");

  @TempDir Path dir;
  private Process agent;

  @AfterEach
  void stop() throws InterruptedException {
    if (agent != null) {
      agent.destroy();
      agent.waitFor(30, TimeUnit.SECONDS);
    }
  }

  /** The JVM options of the agent image's entrypoint (agent-runtime/pom.xml, Jib). */
  static List<String> imageJvmOptions() throws IOException {
    String pom = Files.readString(Path.of("pom.xml"));
    String entrypoint = pom.substring(pom.indexOf("<entrypoint>"), pom.indexOf("</entrypoint>"));
    List<String> args = new ArrayList<>();
    Matcher arg = Pattern.compile("<arg>([^<]*)</arg>").matcher(entrypoint);
    while (arg.find()) {
      args.add(arg.group(1));
    }
    assertThat(args).startsWith("java").contains("-cp");
    return args.subList(1, args.indexOf("-cp"));
  }

  /** `serve -f` of {@code yaml} in a JVM with the pod's memory and the image's options. */
  private String start(String yaml, List<String> jvm, String... serveArgs) throws Exception {
    Path manifest = dir.resolve("deployment.yaml");
    Files.writeString(manifest, RunningFleet.withFreePorts(yaml));
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvm);
    command.addAll(List.of("-jar", JAR.toString(), "serve", "-f", manifest.toString()));
    command.addAll(List.of(serveArgs));
    agent =
        new ProcessBuilder(command)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("agent.log").toFile())
            .start();
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> !agent.isAlive() || log().contains("ready "));
    assertThat(agent.isAlive()).as(log()).isTrue();
    Matcher url = Pattern.compile("agent a: (\\S+)").matcher(log());
    assertThat(url.find()).as(log()).isTrue();
    return url.group(1).replace("localhost", "127.0.0.1");
  }

  /** A one-agent manifest ("a") with this spec besides the registry's port. */
  private static String manifest(String spec) {
    return """
    apiVersion: pallas.helu.ca/v1alpha1
    kind: PallasDeployment
    metadata: {name: pod}
    spec:
      registry: {port: ${port:registry}}
    """
        + spec;
  }

  private String log() throws IOException {
    return Files.readString(dir.resolve("agent.log"));
  }

  private static List<String> podJvm() throws IOException {
    List<String> jvm = new ArrayList<>(List.of("-XX:MaxRAM=512m", "-XX:+UseSerialGC"));
    jvm.addAll(imageJvmOptions());
    return jvm;
  }

  /**
   * A send_message of about 45 MiB, inside the old fixed limit of 80 MiB, ended the process with
   * OutOfMemoryError in a 512Mi pod. Now the limit is what the heap holds: that body is refused by
   * name, and bodies up to the limit, sent at once with the LLM request each makes, are answered or
   * refused for the bytes held, while the agent lives on.
   */
  @Test
  void bodiesUpToTheLimitDerivedFromThePodsMemoryNeverTakeTheAgentDown() throws Exception {
    try (FakeLlmServer llm = FakeLlmServer.openAi("m")) {
      String url =
          start(
              manifest(
                      """
                        defaultModel: openai.m
                        providers: {openai: {baseUrl: "%s"}}
                        modelCapabilities: {vision: true, contextWindow: 4000000}
                        agents: [{name: a, port: ${port:a}, instanceScope: connection}]
                      """)
                  .formatted(llm.baseUrl()),
              podJvm());
      RawMcp session = RawMcp.open(url, null);

      String refused = announce(url, session.session(), 45L << 20);
      assertThat(refused).startsWith("HTTP/1.1 413").contains("\"code\":-32600");
      Matcher limit = LIMIT.matcher(refused);
      assertThat(limit.find()).as(refused).isTrue();
      long maxBody = (long) (Double.parseDouble(limit.group(1)) * (1 << 20));
      assertThat(maxBody).isBetween(8L << 20, 40L << 20);

      // images filling a body to just under the limit, four at once, twice
      String largest = sendMessageFilling(maxBody - (64 << 10));
      List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
      for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 4; i++) {
          calls.add(HTTP.sendAsync(post(url, session.session(), largest), ofString()));
        }
        int answered = 0;
        for (CompletableFuture<HttpResponse<String>> call : calls) {
          HttpResponse<String> r;
          try {
            r = call.get(120, TimeUnit.SECONDS);
          } catch (ExecutionException e) {
            // refused before its body was read: the server answered 503 and closed the
            // connection while this client was still sending
            assertThat(e).hasRootCauseInstanceOf(IOException.class);
            continue;
          }
          if (r.statusCode() == 200) {
            assertThat(r.body()).contains("\"isError\":false");
            answered++;
          } else {
            assertThat(r.statusCode()).as(r.body()).isEqualTo(503);
            assertThat(r.body()).contains("request bodies being received and answered");
          }
        }
        assertThat(answered).isPositive();
        calls.clear();
      }
      assertThat(agent.isAlive()).as(log()).isTrue();
      assertThat(RawMcp.text(session.callTool("get_health", Map.of()))).contains("\"status\"");
      assertThat(llm.chatRequests()).isNotEmpty();
    }
  }

  /**
   * A thousand slow calls (the `slow` model answers after 3 s) are all in flight at once in the
   * pod's memory: the fixed cap of 512 concurrent requests refused 488 of them.
   */
  @Test
  void aThousandSlowCallsAreAllAnswered() throws Exception {
    String url =
        start(
            manifest(
                """
                  defaultModel: slow
                  agents: [{name: a, port: ${port:a}, instanceScope: request}]
                """),
            podJvm());
    String session = RawMcp.open(url, null).session();
    String call =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
            + "\"send_message\",\"arguments\":{\"message\":\"slow\"}}}";
    List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      calls.add(HTTP.sendAsync(post(url, session, call), ofString()));
    }
    int answered = 0;
    List<String> failures = new ArrayList<>();
    for (CompletableFuture<HttpResponse<String>> c : calls) {
      HttpResponse<String> r = c.get(180, TimeUnit.SECONDS);
      if (r.statusCode() == 200 && r.body().contains("\"isError\":false")) {
        answered++;
      } else if (failures.size() < 3) {
        failures.add(r.statusCode() + " " + r.body());
      }
    }
    assertThat(answered).as("%s", failures).isEqualTo(1000);
    assertThat(agent.isAlive()).as(log()).isTrue();
  }

  /**
   * A body that fails while it is read (here: no heap for it, the JVM without
   * ExitOnOutOfMemoryError as `serve` runs on a laptop) gives its share of the bytes held back: two
   * such bodies left every larger body refused for the life of the process.
   */
  @Test
  void aBodyThatFailsWhileReadGivesItsShareBack() throws Exception {
    String url =
        start(
            manifest(
                """
                  defaultModel: passthrough
                  agents: [{name: a, port: ${port:a}}]
                """),
            List.of("-Xmx64m", "-XX:+UseSerialGC"),
            "--max-body-size",
            "80",
            "--max-body-bytes-held",
            "160");
    String session = RawMcp.open(url, null).session();
    for (int i = 0; i < 2; i++) {
      String answer = sendWhole(url, session, 79 << 20);
      assertThat(answer).doesNotContain("Exception", "\tat ");
    }
    assertThat(agent.isAlive()).as(log()).isTrue();
    // 158 MiB of the 160 would still be held: a body of 3 MiB was refused
    String three = "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}" + " ".repeat(3 << 20);
    HttpResponse<String> r = HTTP.send(post(url, session, three), ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
  }

  /** The answer to a POST that announces {@code length} bytes and sends none of them. */
  private static String announce(String url, String session, long length) throws Exception {
    URI uri = URI.create(url);
    try (Socket socket = new Socket(uri.getHost(), uri.getPort())) {
      socket.setSoTimeout(30_000);
      socket
          .getOutputStream()
          .write(head(uri, session, length).getBytes(StandardCharsets.US_ASCII));
      return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  /**
   * The answer to a POST of {@code length} bytes (a ping padded with spaces), all of them sent
   * unless the server closes the connection first.
   */
  private static String sendWhole(String url, String session, int length) throws Exception {
    URI uri = URI.create(url);
    try (Socket socket = new Socket(uri.getHost(), uri.getPort())) {
      socket.setSoTimeout(60_000);
      OutputStream out = socket.getOutputStream();
      out.write(head(uri, session, length).getBytes(StandardCharsets.US_ASCII));
      byte[] ping = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}".getBytes();
      out.write(ping);
      byte[] spaces = " ".repeat(1 << 20).getBytes(StandardCharsets.US_ASCII);
      try {
        for (long sent = ping.length; sent < length; sent += spaces.length) {
          out.write(spaces, 0, (int) Math.min(spaces.length, length - sent));
        }
      } catch (IOException closed) {
        // the server answered and closed without reading the rest
      }
      try {
        return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      } catch (IOException reset) {
        return "";
      }
    }
  }

  private static String head(URI uri, String session, long length) {
    return "POST "
        + uri.getPath()
        + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + "Accept: application/json, text/event-stream\r\nMcp-Session-Id: "
        + session
        + "\r\nContent-Length: "
        + length
        + "\r\nConnection: close\r\n\r\n";
  }

  /** A send_message whose images make its body about {@code bytes} long. */
  private static String sendMessageFilling(long bytes) throws Exception {
    int image = 5 << 20; // the largest image, 6.7 MiB as base64
    List<Map<String, String>> images = new ArrayList<>();
    long left = bytes - 256;
    while (left > 1024) {
      int raw = (int) Math.min(image, left / 4 * 3);
      String data = Base64.getEncoder().encodeToString(new byte[raw]);
      images.add(Map.of("data", data, "mime_type", "image/png"));
      left -= data.length() + 48;
    }
    JsonNode call =
        JSON.valueToTree(
            Map.of(
                "jsonrpc",
                "2.0",
                "id",
                1,
                "method",
                "tools/call",
                "params",
                Map.of(
                    "name",
                    "send_message",
                    "arguments",
                    Map.of("message", "look", "images", images))));
    String body = JSON.writeValueAsString(call);
    assertThat((long) body.length()).isBetween(bytes - (1 << 20), bytes);
    return body;
  }

  private static HttpRequest post(String url, String session, String body) {
    return HttpRequest.newBuilder(URI.create(url))
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("Mcp-Session-Id", session)
        .timeout(Duration.ofMinutes(3))
        .POST(HttpRequest.BodyPublishers.ofString(body))
        .build();
  }

  private static HttpResponse.BodyHandler<String> ofString() {
    return HttpResponse.BodyHandlers.ofString();
  }
}
