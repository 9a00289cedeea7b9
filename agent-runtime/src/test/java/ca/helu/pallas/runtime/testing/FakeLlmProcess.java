package ca.helu.pallas.runtime.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * An OpenAI-compatible {@link FakeLlmServer} in a JVM of its own, for a benchmark that counts the
 * CPU of its own JVM's threads (EdgeCostBenchmarkIT): the model's work is then not the agent's. It
 * answers every chat request with the same text, forgets the requests it recorded (a benchmark's
 * tens of thousands would fill its heap), and stops when its parent closes its standard input.
 */
public final class FakeLlmProcess implements AutoCloseable {
  /** The answer to every chat request: a sentence, as a model's short answer. */
  public static final String ANSWER =
      "Noted: the helper has your message and will answer it shortly.";

  private final Process process;
  private final String baseUrl;

  private FakeLlmProcess(Process process, String baseUrl) {
    this.process = process;
    this.baseUrl = baseUrl;
  }

  /** Starts one serving model {@code model}, with this JVM's class path. */
  public static FakeLlmProcess start(String model) throws IOException {
    String java = ProcessHandle.current().info().command().orElse("java");
    List<String> command = new ArrayList<>(List.of(java, "-Xmx128m", "-XX:+UseSerialGC"));
    command.addAll(
        List.of(
            "-cp", System.getProperty("java.class.path"), FakeLlmProcess.class.getName(), model));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    BufferedReader out =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    String url = out.readLine();
    if (url == null || !url.startsWith("http://")) {
      process.destroyForcibly();
      throw new IOException("the fake LLM process did not start: " + url);
    }
    return new FakeLlmProcess(process, url);
  }

  /** e.g. http://127.0.0.1:PORT/v1 */
  public String baseUrl() {
    return baseUrl;
  }

  @Override
  public void close() {
    process.destroy();
  }

  public static void main(String[] args) throws Exception {
    try (FakeLlmServer llm = FakeLlmServer.openAi(args)) {
      llm.otherwise(() -> llm.text(ANSWER, 42, 12));
      ScheduledExecutorService forget = Executors.newSingleThreadScheduledExecutor();
      forget.scheduleWithFixedDelay(llm::reset, 1, 1, TimeUnit.SECONDS);
      System.out.println(llm.baseUrl());
      System.out.flush();
      while (System.in.read() >= 0) {
        // until the parent closes its end (or dies)
      }
      forget.shutdownNow();
    }
  }
}
