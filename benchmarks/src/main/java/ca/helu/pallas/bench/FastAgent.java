package ca.helu.pallas.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The peer: fast-agent (PyPI {@code fast-agent-mcp}, the runtime the original Pallas wraps) serving
 * one agent on its passthrough model over Streamable HTTP. Installed on first use in a venv under
 * {@code ~/.cache/pallas/bench}, with a Python of at least 3.12 ({@code PALLAS_BENCH_PYTHON}, a
 * pyenv one, or {@code python3}).
 */
final class FastAgent {
  static final String VERSION = "0.10.44";

  /** The tool `fast-agent serve` exposes for its one agent: it answers like send_message. */
  static final String TOOL = "agent";

  private FastAgent() {}

  /**
   * fastagent.config.yaml for the benchmark: the passthrough model, nothing printed per call (a
   * progress display or chat log would be CPU the peer spends on us, not on calls).
   */
  static String config() {
    return """
    default_model: passthrough
    logger:
      type: none
      level: error
      progress_display: false
      show_chat: false
      show_tools: false
    """;
  }

  /**
   * The command line that serves the agent on {@code port}, for the fast-agent in {@code venv}, its
   * home (sessions, cards) in {@code home} rather than the user's.
   */
  static List<String> serveCommand(Path venv, Path config, Path home, int port) {
    return List.of(
        venv.resolve("bin/fast-agent").toString(),
        "serve",
        "--config-path",
        config.toString(),
        "--model",
        "passthrough",
        "--transport",
        "http",
        "--host",
        "127.0.0.1",
        "--port",
        Integer.toString(port),
        "--instance-scope",
        "request",
        "--home",
        home.toString());
  }

  /** The venv holding fast-agent, installed (once) if it is not there yet. */
  static Path install() throws IOException, InterruptedException {
    Path venv =
        Path.of(
            System.getProperty("user.home"), ".cache", "pallas", "bench", "fast-agent-" + VERSION);
    if (Files.isExecutable(venv.resolve("bin/fast-agent"))) {
      return venv;
    }
    String python =
        python().orElseThrow(() -> new IllegalStateException("no Python >= 3.12 for fast-agent"));
    run(List.of(python, "-m", "venv", venv.toString()));
    run(
        List.of(
            venv.resolve("bin/pip").toString(),
            "install",
            "-q",
            "--disable-pip-version-check",
            "fast-agent-mcp==" + VERSION));
    return venv;
  }

  private static Optional<String> python() throws IOException {
    List<String> candidates = new ArrayList<>();
    String env = System.getenv("PALLAS_BENCH_PYTHON");
    if (env != null) {
      candidates.add(env);
    }
    Path pyenv = Path.of(System.getProperty("user.home"), ".pyenv", "versions");
    if (Files.isDirectory(pyenv)) {
      try (Stream<Path> versions = Files.list(pyenv)) {
        versions
            .map(v -> v.getFileName().toString())
            .filter(v -> pythonAtLeast312(v))
            .sorted(Comparator.reverseOrder())
            .forEach(v -> candidates.add(pyenv.resolve(v).resolve("bin/python3").toString()));
      }
    }
    candidates.add("python3");
    for (String candidate : candidates) {
      try {
        Process p =
            new ProcessBuilder(candidate, "-c", "import sys; print(sys.version.split()[0])")
                .redirectErrorStream(true)
                .start();
        String version = new String(p.getInputStream().readAllBytes()).strip();
        if (p.waitFor() == 0 && pythonAtLeast312(version)) {
          return Optional.of(candidate);
        }
      } catch (IOException | InterruptedException e) {
        // not there: try the next
      }
    }
    return Optional.empty();
  }

  /** Whether a version string such as "3.12.1" is a Python fast-agent runs on (3.12 or later). */
  static boolean pythonAtLeast312(String version) {
    String[] parts = version.split("\\.");
    if (parts.length < 2) {
      return false;
    }
    try {
      int major = Integer.parseInt(parts[0]);
      int minor = Integer.parseInt(parts[1]);
      return major > 3 || (major == 3 && minor >= 12);
    } catch (NumberFormatException e) {
      return false;
    }
  }

  private static void run(List<String> command) throws IOException, InterruptedException {
    System.out.println("fast-agent peer: " + String.join(" ", command));
    Process p = new ProcessBuilder(command).inheritIO().start();
    if (p.waitFor() != 0) {
      throw new IllegalStateException("failed (" + p.exitValue() + "): " + command);
    }
  }
}
