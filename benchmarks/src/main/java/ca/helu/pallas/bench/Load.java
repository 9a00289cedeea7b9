package ca.helu.pallas.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Load generators: Java SDK clients, raw Streamable HTTP sessions, and wrk. */
final class Load {
  private static final ObjectMapper JSON = new ObjectMapper();
  static final HttpClient HTTP =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  /**
   * Throughput and latency of one measured window, and the server's CPU per call in it (NaN when
   * not measured).
   */
  record Result(
      double perSecond, double p50Ms, double p99Ms, long calls, long errors, double cpuMicros) {
    Result(double perSecond, double p50Ms, double p99Ms, long calls, long errors) {
      this(perSecond, p50Ms, p99Ms, calls, errors, Double.NaN);
    }

    /** This result with the server CPU spent over the window spread on its calls. */
    Result withCpu(long cpuNanos) {
      return new Result(
          perSecond, p50Ms, p99Ms, calls, errors, ProcStat.microsPerCall(cpuNanos, calls));
    }
  }

  /** A server's CPU time so far, in nanoseconds. */
  interface Cpu {
    long nanos() throws Exception;

    Cpu NONE = () -> 0;
  }

  /** N Java SDK client sessions calling {@code tool} back to back. */
  static Result sdkClosedLoop(
      String url, String tool, int sessions, Duration warmup, Duration measure) throws Exception {
    return sdkClosedLoop(url, tool, sessions, warmup, measure, Cpu.NONE);
  }

  /** The same, with the server's CPU per call measured over the window. */
  static Result sdkClosedLoop(
      String url, String tool, int sessions, Duration warmup, Duration measure, Cpu serverCpu)
      throws Exception {
    List<McpSyncClient> clients = new ArrayList<>();
    for (int i = 0; i < sessions; i++) {
      int slash = url.indexOf('/', "http://".length());
      McpSyncClient c =
          McpClient.sync(
                  HttpClientStreamableHttpTransport.builder(url.substring(0, slash))
                      .endpoint(url.substring(slash))
                      .build())
              .requestTimeout(Duration.ofSeconds(30))
              .build();
      c.initialize();
      clients.add(c);
    }
    McpSchema.CallToolRequest request =
        new McpSchema.CallToolRequest(tool, Map.of("message", "hello"));
    try {
      return closedLoop(
          sessions, warmup, measure, i -> clients.get(i).callTool(request), serverCpu);
    } finally {
      clients.forEach(McpSyncClient::closeGracefully);
    }
  }

  interface Call {
    void run(int session) throws Exception;
  }

  static Result closedLoop(int sessions, Duration warmup, Duration measure, Call call)
      throws Exception {
    return closedLoop(sessions, warmup, measure, call, Cpu.NONE);
  }

  static Result closedLoop(
      int sessions, Duration warmup, Duration measure, Call call, Cpu serverCpu) throws Exception {
    AtomicBoolean measuring = new AtomicBoolean();
    AtomicBoolean stop = new AtomicBoolean();
    long[][] latencies = new long[sessions][];
    int[] counts = new int[sessions];
    long[] errors = new long[sessions];
    List<Thread> threads = new ArrayList<>();
    for (int s = 0; s < sessions; s++) {
      int session = s;
      latencies[s] = new long[1 << 16];
      threads.add(
          Thread.ofPlatform()
              .start(() -> {
                while (!stop.get()) {
                  long t0 = System.nanoTime();
                  boolean ok = true;
                  try {
                    call.run(session);
                  } catch (Exception e) {
                    ok = false;
                  }
                  long took = System.nanoTime() - t0;
                  if (measuring.get()) {
                    if (!ok) {
                      errors[session]++;
                    }
                    if (counts[session] == latencies[session].length) {
                      latencies[session] = Arrays.copyOf(latencies[session], counts[session] * 2);
                    }
                    latencies[session][counts[session]++] = took;
                  }
                }
              }));
    }
    Thread.sleep(warmup.toMillis());
    long cpu0 = serverCpu.nanos();
    measuring.set(true);
    long t0 = System.nanoTime();
    Thread.sleep(measure.toMillis());
    measuring.set(false);
    long elapsed = System.nanoTime() - t0;
    long cpu = serverCpu.nanos() - cpu0;
    stop.set(true);
    for (Thread t : threads) {
      t.join();
    }
    Result r = summarize(latencies, counts, Arrays.stream(errors).sum(), elapsed);
    return serverCpu == Cpu.NONE ? r : r.withCpu(cpu);
  }

  static Result summarize(long[][] latencies, int[] counts, long errors, long elapsedNanos) {
    int total = Arrays.stream(counts).sum();
    long[] all = new long[total];
    int at = 0;
    for (int s = 0; s < latencies.length; s++) {
      System.arraycopy(latencies[s], 0, all, at, counts[s]);
      at += counts[s];
    }
    Arrays.sort(all);
    return new Result(total / (elapsedNanos / 1e9), pct(all, 0.50), pct(all, 0.99), total, errors);
  }

  static double pct(long[] sorted, double q) {
    if (sorted.length == 0) {
      return Double.NaN;
    }
    return sorted[Math.min(sorted.length - 1, (int) Math.floor(q * sorted.length))] / 1e6;
  }

  /**
   * A raw Streamable HTTP session over the shared HttpClient (cheap: no thread per session); null
   * when the server is stateless.
   */
  static String openSession(String url) throws Exception {
    HttpResponse<String> init =
        post(
            url,
            null,
            "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                + "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}");
    if (init.statusCode() != 200) {
      throw new IllegalStateException("initialize answered " + init.statusCode());
    }
    // a stateless server (fast-agent) names no session: its calls then carry none
    String session = init.headers().firstValue("mcp-session-id").orElse(null);
    post(url, session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    return session;
  }

  static String toolCallBody(String tool, Map<String, Object> args) throws Exception {
    return JSON.writeValueAsString(
        Map.of(
            "jsonrpc",
            "2.0",
            "id",
            1,
            "method",
            "tools/call",
            "params",
            Map.of("name", tool, "arguments", args)));
  }

  static HttpResponse<String> post(String url, String session, String body) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(url))
            .timeout(Duration.ofSeconds(120))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (session != null) {
      b.header("Mcp-Session-Id", session);
    }
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** wrk -t2 -cN: POST bodies on pre-opened MCP sessions (round robin), or plain GETs. */
  static Result wrk(
      String url, List<String> sessions, String body, Duration duration, int connections)
      throws Exception {
    return wrk(url, sessions, body, duration, connections, Cpu.NONE);
  }

  /** The same, with the server's CPU per request measured over wrk's run. */
  static Result wrk(
      String url,
      List<String> sessions,
      String body,
      Duration duration,
      int connections,
      Cpu serverCpu)
      throws Exception {
    Path script = Files.createTempFile("pallas-wrk", ".lua");
    StringBuilder lua = new StringBuilder();
    if (body != null) {
      lua.append("local sessions = {");
      for (String s : sessions) {
        if (s != null) {
          lua.append('"').append(s).append("\",");
        }
      }
      lua.append("}\nlocal body = ").append(luaString(body)).append('\n');
      lua.append(
          """
          local i = 0
          request = function()
            i = i + 1
            local headers = {["Content-Type"] = "application/json",
              ["Accept"] = "application/json, text/event-stream"}
            if #sessions > 0 then
              headers["Mcp-Session-Id"] = sessions[(i % #sessions) + 1]
            end
            return wrk.format("POST", nil, headers, body)
          end
          """);
    }
    Files.writeString(script, lua);
    List<String> command =
        new ArrayList<>(
            List.of(
                "wrk",
                "-t2",
                "-c" + connections,
                "-d" + duration.toSeconds() + "s",
                "--latency",
                "--timeout",
                "10s"));
    if (body != null) {
      command.addAll(List.of("-s", script.toString()));
    }
    command.add(url);
    long cpu0 = serverCpu.nanos();
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    p.waitFor();
    long cpu = serverCpu.nanos() - cpu0;
    Matcher rps = Pattern.compile("Requests/sec:\\s+([0-9.]+)").matcher(out);
    if (!rps.find()) {
      throw new IllegalStateException("wrk output not understood:\n" + out);
    }
    Matcher total = Pattern.compile("(\\d+) requests in").matcher(out);
    Result r =
        new Result(
            Double.parseDouble(rps.group(1)),
            wrkPercentile(out, "50%"),
            wrkPercentile(out, "99%"),
            total.find() ? Long.parseLong(total.group(1)) : -1,
            wrkErrors(out));
    return serverCpu == Cpu.NONE ? r : r.withCpu(cpu);
  }

  /** Responses that were not 2xx or 3xx, plus requests wrk gave up on (timeouts, resets). */
  static long wrkErrors(String out) {
    long errors = 0;
    Matcher non2xx = Pattern.compile("Non-2xx or 3xx responses: (\\d+)").matcher(out);
    if (non2xx.find()) {
      errors += Long.parseLong(non2xx.group(1));
    }
    Matcher socket =
        Pattern.compile("Socket errors: connect (\\d+), read (\\d+), write (\\d+), timeout (\\d+)")
            .matcher(out);
    if (socket.find()) {
      for (int i = 1; i <= 4; i++) {
        errors += Long.parseLong(socket.group(i));
      }
    }
    return errors;
  }

  private static double wrkPercentile(String out, String label) {
    Matcher m = Pattern.compile("\\s" + label + "\\s+([0-9.]+)(us|ms|s)").matcher(out);
    if (!m.find()) {
      return Double.NaN;
    }
    double v = Double.parseDouble(m.group(1));
    return switch (m.group(2)) {
      case "us" -> v / 1000;
      case "s" -> v * 1000;
      default -> v;
    };
  }

  private static String luaString(String s) {
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }

  static boolean hasWrk() {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
      if (Files.isExecutable(Path.of(dir, "wrk"))) {
        return true;
      }
    }
    return false;
  }
}
