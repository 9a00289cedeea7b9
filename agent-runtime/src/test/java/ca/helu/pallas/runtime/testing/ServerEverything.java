package ca.helu.pallas.runtime.testing;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * The reference MCP server {@code @modelcontextprotocol/server-everything} from npm, in Streamable
 * HTTP mode on a free port. Installed once into ~/.cache/pallas-test (npm registry access needed
 * the first time); tests using it are skipped, saying so, only where npm is absent.
 */
public final class ServerEverything implements AutoCloseable {
  public static final String VERSION = "2026.8.31";
  private static final Path CACHE =
      Path.of(
          System.getProperty("user.home"), ".cache", "pallas-test", "server-everything-" + VERSION);
  private final Process process;
  private final int port;

  private ServerEverything(Process process, int port) {
    this.process = process;
    this.port = port;
  }

  public static ServerEverything start() throws Exception {
    Path entry =
        CACHE.resolve("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if (!Files.exists(entry)) {
      Assumptions.assumeTrue(
          onPath("npm") && onPath("node"),
          "needs node and npm on the PATH to install @modelcontextprotocol/server-everything");
      Files.createDirectories(CACHE);
      Process install =
          new ProcessBuilder(
                  "npm",
                  "install",
                  "--silent",
                  "--no-audit",
                  "--no-fund",
                  "--prefix",
                  CACHE.toString(),
                  "@modelcontextprotocol/server-everything@" + VERSION)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      if (!install.waitFor(5, TimeUnit.MINUTES) || install.exitValue() != 0) {
        throw new IllegalStateException("npm install of server-everything failed");
      }
    }
    int port = RunningFleet.freePort();
    ProcessBuilder pb =
        new ProcessBuilder("node", entry.toString(), "streamableHttp")
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD);
    pb.environment().put("PORT", Integer.toString(port));
    ServerEverything server = new ServerEverything(pb.start(), port);
    server.awaitUp();
    return server;
  }

  private void awaitUp() throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException("server-everything exited with " + process.exitValue());
      }
      try {
        http.send(
            HttpRequest.newBuilder(URI.create(url())).timeout(Duration.ofSeconds(1)).GET().build(),
            HttpResponse.BodyHandlers.discarding());
        return;
      } catch (IOException e) {
        Thread.sleep(100);
      }
    }
    throw new IllegalStateException("server-everything did not start on port " + port);
  }

  private static boolean onPath(String command) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      if (Files.isExecutable(Path.of(dir, command))) {
        return true;
      }
    }
    return false;
  }

  public String url() {
    return "http://127.0.0.1:" + port + "/mcp";
  }

  /** SIGKILL: the process dies with its streams open, as a crashing server would. */
  public void kill() throws InterruptedException {
    process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
  }

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
