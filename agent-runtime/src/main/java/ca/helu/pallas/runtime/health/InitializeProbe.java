package ca.helu.pallas.runtime.health;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * The downstream probe of docs/runtime.md, "Health": POST an MCP {@code initialize} with the
 * server's headers, then DELETE the session it returned so no server-side state leaks. Never
 * throws.
 */
public final class InitializeProbe {
  private static final ObjectMapper JSON = new ObjectMapper();

  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(3);
  private static final String INITIALIZE =
      "{\"jsonrpc\":\"2.0\",\"id\":\"pallas-health\",\"method\":\"initialize\",\"params\":{"
          + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
          + "\"clientInfo\":{\"name\":\"pallas-health\",\"version\":\"1.0.0\"}}}";

  private final Supplier<HttpClient> http;
  private final Duration timeout;

  public InitializeProbe(Supplier<HttpClient> http, Duration timeout) {
    this.http = http;
    this.timeout = timeout;
  }

  /** Whether the answer (JSON, or SSE data lines) holds an initialize result. */
  static boolean isInitializeResult(String body) {
    for (String line : body.split("\n")) {
      String data = line.startsWith("data:") ? line.substring(5).strip() : line.strip();
      if (!data.startsWith("{")) {
        continue;
      }
      try {
        if (JSON.readTree(data).path("result").path("protocolVersion").isTextual()) {
          return true;
        }
      } catch (IOException e) {
        // not JSON: not an answer
      }
    }
    return false;
  }

  public CheckResult probe(String url, Map<String, String> headers) {
    long deadline = System.nanoTime() + timeout.toNanos();
    try {
      HttpRequest.Builder post =
          HttpRequest.newBuilder(URI.create(url))
              .timeout(timeout)
              .header("Content-Type", "application/json")
              .header("Accept", "application/json, text/event-stream")
              .POST(HttpRequest.BodyPublishers.ofString(INITIALIZE));
      headers.forEach(post::header);
      HttpResponse<String> response =
          http.get()
              .sendAsync(post.build(), HttpResponse.BodyHandlers.ofString())
              .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      if (response.statusCode() / 100 != 2) {
        return CheckResult.failed("HTTP " + response.statusCode());
      }
      if (!isInitializeResult(response.body())) {
        return CheckResult.failed("not an MCP server (no initialize result)");
      }
      response
          .headers()
          .firstValue("Mcp-Session-Id")
          .ifPresent(session -> delete(url, session, headers, deadline));
      return CheckResult.ok("reachable");
    } catch (TimeoutException e) {
      return CheckResult.failed("timed out after " + timeout.toSeconds() + "s");
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof HttpTimeoutException) {
        return CheckResult.failed("timed out after " + timeout.toSeconds() + "s");
      }
      if (cause instanceof ConnectException) {
        return CheckResult.failed("connection refused");
      }
      return CheckResult.failed(
          cause == null || cause.getMessage() == null
              ? "unreachable"
              : "unreachable (" + cause.getMessage() + ")");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return CheckResult.failed("interrupted");
    } catch (IllegalArgumentException e) {
      return CheckResult.failed("bad URL or header: " + e.getMessage());
    }
  }

  private void delete(String url, String session, Map<String, String> headers, long deadline) {
    long left = Math.max(100_000_000L, deadline - System.nanoTime());
    HttpRequest.Builder delete =
        HttpRequest.newBuilder(URI.create(url))
            .timeout(Duration.ofNanos(left))
            .header("Mcp-Session-Id", session)
            .DELETE();
    headers.forEach(delete::header);
    try {
      http.get().send(delete.build(), HttpResponse.BodyHandlers.discarding());
    } catch (Exception e) {
      // the probe already succeeded; a failed teardown only leaves one idle session behind
    }
  }
}
