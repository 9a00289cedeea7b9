package ca.helu.pallas.runtime.testing;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
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
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real Jaeger v2 for a test class (docs/observability.md, "Tests"): built once from the Go module
 * proxy into {@code ~/.cache/pallas/jaeger/<version>} ({@code user.home} as Maven passes it),
 * started with a configuration of our own on free 127.0.0.1 ports (an OTLP/HTTP receiver, the query
 * API), its traces kept in memory. {@link #trace(String)} reads a trace through the query API.
 *
 * <p>{@code @RegisterExtension static final JaegerServer JAEGER = new JaegerServer();}
 */
public final class JaegerServer implements BeforeAllCallback, AfterAllCallback {
  /**
   * Jaeger's Go module: its {@code v1.x} tags carry the v2 binary {@code cmd/jaeger} too (v1.76.0
   * is Jaeger v2.13.0).
   */
  public static final String MODULE = "github.com/jaegertracing/jaeger";

  public static final String VERSION = "v1.76.0";

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration READY = Duration.ofSeconds(60);

  private final HttpClient http = HttpClient.newHttpClient();
  private Path dir;
  private Process process;
  private int otlpPort;
  private int queryPort;

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    Path binary = binary();
    dir = Files.createTempDirectory("pallas-jaeger");
    otlpPort = RunningFleet.unboundPort();
    queryPort = RunningFleet.unboundPort();
    int grpcPort = RunningFleet.unboundPort();
    int healthPort = RunningFleet.unboundPort();
    Path config = dir.resolve("config.yaml");
    Files.writeString(config, config(otlpPort, queryPort, grpcPort, healthPort));
    process =
        new ProcessBuilder(binary.toString(), "--config", config.toString())
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("log").toFile())
            .start();
    try {
      await()
          .atMost(READY)
          .pollInterval(Duration.ofMillis(200))
          .ignoreExceptions()
          .until(() -> {
            if (!process.isAlive()) {
              throw new IllegalStateException("Jaeger exited: " + log());
            }
            return get("/api/services").statusCode() == 200;
          });
    } catch (RuntimeException e) {
      afterAll(context);
      throw new IllegalStateException("Jaeger did not become ready: " + log(), e);
    }
  }

  /** Our configuration: OTLP/HTTP in, memory storage, the query API; nothing on other ports. */
  private static String config(int otlp, int query, int grpc, int health) {
    return """
    service:
      extensions: [jaeger_storage, jaeger_query, healthcheckv2]
      pipelines:
        traces:
          receivers: [otlp]
          processors: [batch]
          exporters: [jaeger_storage_exporter]
      telemetry:
        metrics:
          level: none
        logs:
          level: info
    extensions:
      healthcheckv2:
        use_v2: true
        http:
          endpoint: 127.0.0.1:%d
      jaeger_query:
        storage:
          traces: memstore
        http:
          endpoint: 127.0.0.1:%d
        grpc:
          endpoint: 127.0.0.1:%d
      jaeger_storage:
        backends:
          memstore:
            memory:
              max_traces: 10000
    receivers:
      otlp:
        protocols:
          http:
            endpoint: 127.0.0.1:%d
    processors:
      batch:
        timeout: 100ms
    exporters:
      jaeger_storage_exporter:
        trace_storage: memstore
    """
        .formatted(health, query, grpc, otlp);
  }

  /** Where OTLP over HTTP is received (an exporter's {@code OTEL_EXPORTER_OTLP_ENDPOINT}). */
  public String otlpEndpoint() {
    return "http://127.0.0.1:" + otlpPort;
  }

  /** One span as Jaeger's query API shows it. */
  public record Span(
      String traceId,
      String spanId,
      Optional<String> parentId,
      String name,
      String service,
      Map<String, String> tags,
      long durationMicros) {
    public String tag(String key) {
      return tags.get(key);
    }
  }

  /** The spans of the trace {@code traceId} Jaeger holds now (none if it holds no such trace). */
  public List<Span> trace(String traceId) throws IOException, InterruptedException {
    HttpResponse<String> response = get("/api/traces/" + traceId);
    if (response.statusCode() == 404) {
      return List.of();
    }
    if (response.statusCode() != 200) {
      throw new IllegalStateException(
          "Jaeger answered " + response.statusCode() + ": " + response.body());
    }
    return spans(response.body());
  }

  /** The spans of the latest traces of {@code service} (at most 50 traces). */
  public List<Span> traces(String service) throws IOException, InterruptedException {
    HttpResponse<String> response =
        get("/api/traces?limit=50&service=" + URLEncoder.encode(service, StandardCharsets.UTF_8));
    return response.statusCode() == 200 ? spans(response.body()) : List.of();
  }

  /**
   * The spans of an answer of Jaeger's query API ({@code /api/traces}), of every trace it holds:
   * also for a Jaeger this class did not start (a pod's, on the real node).
   */
  public static List<Span> spans(String body) throws IOException {
    List<Span> spans = new ArrayList<>();
    for (JsonNode trace : JSON.readTree(body).path("data")) {
      JsonNode processes = trace.path("processes");
      for (JsonNode span : trace.path("spans")) {
        Optional<String> parent = Optional.empty();
        for (JsonNode ref : span.path("references")) {
          if ("CHILD_OF".equals(ref.path("refType").asText())) {
            parent = Optional.of(ref.path("spanID").asText());
          }
        }
        Map<String, String> tags = new LinkedHashMap<>();
        for (JsonNode tag : span.path("tags")) {
          tags.put(tag.path("key").asText(), tag.path("value").asText());
        }
        String service =
            processes.path(span.path("processID").asText()).path("serviceName").asText();
        spans.add(
            new Span(
                span.path("traceID").asText(),
                span.path("spanID").asText(),
                parent,
                span.path("operationName").asText(),
                service,
                tags,
                span.path("duration").asLong()));
      }
    }
    return spans;
  }

  /** The names of the services Jaeger has received spans from. */
  public List<String> services() throws IOException, InterruptedException {
    List<String> names = new ArrayList<>();
    for (JsonNode name : JSON.readTree(get("/api/services").body()).path("data")) {
      names.add(name.asText());
    }
    return names;
  }

  private HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + queryPort + path))
            .timeout(Duration.ofSeconds(10))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private String log() {
    try {
      String log = Files.readString(dir.resolve("log"));
      return log.length() <= 4000 ? log : log.substring(log.length() - 4000);
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    if (process != null) {
      process.destroy();
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
      }
      process = null;
    }
    if (dir != null) {
      try (Stream<Path> all = Files.walk(dir)) {
        all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
      dir = null;
    }
  }

  /**
   * The Jaeger binary, built on first use: {@code go install} refuses Jaeger's module (its go.mod
   * has replace directives), so the module is downloaded from the Go module proxy and built in
   * place, as its own main module.
   */
  public static synchronized Path binary() throws IOException, InterruptedException {
    Path cache = Path.of(System.getProperty("user.home"), ".cache", "pallas", "jaeger", VERSION);
    Path binary = cache.resolve("jaeger");
    if (Files.isExecutable(binary)) {
      return binary;
    }
    Files.createDirectories(cache);
    String download = run(Path.of("."), go(), "mod", "download", "-json", MODULE + "@" + VERSION);
    Path source = Path.of(JSON.readTree(download).path("Dir").asText());
    Path partial = Files.createTempFile(cache, "jaeger", ".partial");
    run(source, go(), "build", "-trimpath", "-o", partial.toString(), "./cmd/jaeger");
    Files.move(partial, binary, StandardCopyOption.ATOMIC_MOVE);
    return binary;
  }

  /** Go as tools/go-binaries.sh finds it: /usr/local/go, which may not be on the PATH, else go. */
  private static String go() {
    Path local = Path.of("/usr/local/go/bin/go");
    return Files.isExecutable(local) ? local.toString() : "go";
  }

  private static String run(Path dir, String... command) throws IOException, InterruptedException {
    Path out = Files.createTempFile("pallas-go", ".log");
    try {
      Process p =
          new ProcessBuilder(command)
              .directory(dir.toFile())
              .redirectErrorStream(false)
              .redirectOutput(out.toFile())
              .redirectError(ProcessBuilder.Redirect.INHERIT)
              .start();
      if (!p.waitFor(30, TimeUnit.MINUTES)) {
        p.destroyForcibly().waitFor();
        throw new IllegalStateException(String.join(" ", command) + " took over 30 minutes");
      }
      if (p.exitValue() != 0) {
        throw new IllegalStateException(
            String.join(" ", command) + " failed (exit " + p.exitValue() + ")");
      }
      return Files.readString(out);
    } finally {
      Files.delete(out);
    }
  }
}
