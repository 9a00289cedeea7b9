package ca.helu.pallas.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Runs e2e/python with pytest: the official Python MCP SDK doing what Daedalus does, and the MCP
 * conformance suite, both against {@code serve} of the built jar. e2e/setup.sh installs them.
 */
class CrossLanguageIT {
  private static final Path E2E = Path.of("").toAbsolutePath();
  private static final Path JAR =
      E2E.resolveSibling("agent-runtime").resolve("target/pallas-agent-runtime.jar");

  @Test
  void pythonSdkAndConformanceSuitePass() throws Exception {
    assertThat(JAR).as("the runnable jar, built by the agent-runtime module").exists();
    run(List.of("bash", "setup.sh"), 900);
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Result pytest =
        run(
            List.of(
                E2E.resolve(".work/venv/bin/python").toString(),
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "python"),
            900,
            "PALLAS_JAR=" + JAR,
            "PALLAS_JAVA=" + java);
    assertThat(pytest.exitCode).as(pytest.output).isZero();
    assertThat(pytest.output).containsPattern("\\d+ passed").doesNotContain(" failed");
  }

  private record Result(int exitCode, String output) {}

  private static Result run(List<String> command, int timeoutSeconds, String... env)
      throws IOException, InterruptedException {
    ProcessBuilder pb =
        new ProcessBuilder(command).directory(E2E.toFile()).redirectErrorStream(true);
    for (String kv : env) {
      int eq = kv.indexOf('=');
      pb.environment().put(kv.substring(0, eq), kv.substring(eq + 1));
    }
    File log = Files.createTempFile("pallas-e2e", ".log").toFile();
    pb.redirectOutput(log);
    Process p = pb.start();
    if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(command + " timed out:\n" + Files.readString(log.toPath()));
    }
    String output = Files.readString(log.toPath(), StandardCharsets.UTF_8);
    System.out.println(output);
    if (p.exitValue() != 0 && command.get(0).equals("bash")) {
      throw new AssertionError(command + " failed:\n" + output);
    }
    return new Result(p.exitValue(), output);
  }
}
