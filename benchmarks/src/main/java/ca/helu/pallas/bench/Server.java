package ca.helu.pallas.bench;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** A server under test in its own JVM, as it runs in production; RSS read from /proc. */
final class Server implements AutoCloseable {
  final Process process;
  final long startedNanos;

  private Server(Process process, long startedNanos) {
    this.process = process;
    this.startedNanos = startedNanos;
  }

  static Server start(List<String> jvmArgs, String mainClass, List<String> args, Path log)
      throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> command = new ArrayList<>(List.of(java));
    // -Xmx256m unless the scenario gives the heap itself (a pod's: -XX:MaxRAM)
    if (jvmArgs.stream().noneMatch(a -> a.startsWith("-Xmx") || a.startsWith("-XX:MaxRAM="))) {
      command.add("-Xmx256m");
    }
    command.addAll(jvmArgs);
    command.addAll(List.of("-cp", Benchmarks.jar().toString(), mainClass));
    command.addAll(args);
    return launch(command, Path.of("."), log);
  }

  /** Any server process (the peer is a Python program), started in {@code dir}. */
  static Server launch(List<String> command, Path dir, Path log) throws IOException {
    long t0 = System.nanoTime();
    Process p =
        new ProcessBuilder(command)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    return new Server(p, t0);
  }

  /** Milliseconds since launch. */
  long millisSinceLaunch() {
    return (System.nanoTime() - startedNanos) / 1_000_000;
  }

  /** Milliseconds from launch until GET url answered 200. */
  long awaitReady(String url) throws Exception {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofMillis(200)).build();
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(1)).build();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException("server exited with " + process.exitValue());
      }
      try {
        if (http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
          return (System.nanoTime() - startedNanos) / 1_000_000;
        }
      } catch (IOException e) {
        Thread.sleep(2);
      }
    }
    throw new IllegalStateException(url + " not ready");
  }

  /** CPU time the server has used so far (user + system), in nanoseconds. */
  long cpuNanos() throws IOException {
    return ProcStat.cpuNanos(process.pid());
  }

  /** Resident set size in MB. */
  double rssMb() throws IOException {
    for (String line :
        Files.readAllLines(Path.of("/proc", Long.toString(process.pid()), "status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0;
      }
    }
    return -1;
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  @Override
  public void close() throws Exception {
    process.destroy();
    if (!process.waitFor(20, java.util.concurrent.TimeUnit.SECONDS)) {
      process.destroyForcibly();
    }
  }
}
