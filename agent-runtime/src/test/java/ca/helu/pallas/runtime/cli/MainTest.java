package ca.helu.pallas.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The command line's parsing, help and usage errors (docs/configuration.md). */
class MainTest {
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int run(String... args) {
    return Main.run(
        List.of(args),
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  private String out() {
    return out.toString(StandardCharsets.UTF_8);
  }

  private String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  @Test
  void everyOptionSetsWhatItNamesInBothSpellings() {
    ServeCommand serve = new ServeCommand();
    boolean run =
        serve
            .options()
            .parse(
                List.of(
                    "-f",
                    "a.yaml",
                    "--agent=writer",
                    "--agent",
                    "critic",
                    "--cluster",
                    "--bind",
                    "127.0.0.1",
                    "--log-format=text",
                    "--drain-timeout",
                    "5",
                    "--body-timeout",
                    "6",
                    "--max-sessions",
                    "7",
                    "--session-idle-timeout",
                    "8",
                    "--max-concurrent-requests",
                    "9",
                    "--max-body-size",
                    "20",
                    "--max-body-bytes-held",
                    "100",
                    "--max-connections=64",
                    "--probe-port",
                    "8086",
                    "--allowed-origin",
                    "https://a.example",
                    "--allowed-origin",
                    "https://b.example"));
    assertThat(run).isTrue();
    assertThat(serve.common.file).isEqualTo(Path.of("a.yaml"));
    assertThat(serve.common.bind).isEqualTo("127.0.0.1");
    assertThat(serve.common.logFormat).isEqualTo(Logging.Format.text);
    assertThat(serve.agents).containsExactly("writer", "critic");
    assertThat(serve.cluster).isTrue();
    assertThat(
            List.of(
                serve.drainSeconds,
                serve.bodyTimeoutSeconds,
                serve.maxSessions,
                serve.maxConcurrentRequests,
                serve.maxConnections,
                serve.probePort))
        .containsExactly(5, 6, 7, 9, 64, 8086);
    assertThat(serve.sessionIdleSeconds).isEqualTo(8);
    assertThat(serve.maxBodyMibHeld).isEqualTo(100);
    assertThat(serve.maxBodyMib).isEqualTo(20);
    assertThat(serve.allowedOrigins).containsExactly("https://a.example", "https://b.example");

    RegistryCommand registry = new RegistryCommand();
    assertThat(
            registry
                .options()
                .parse(
                    List.of(
                        "--config-map", "x-config", "--namespace", "n", "--reload-seconds", "3")))
        .isTrue();
    assertThat(List.of(registry.configMap, registry.namespace)).containsExactly("x-config", "n");
    assertThat(registry.reloadSeconds).isEqualTo(3);
  }

  @Test
  void defaultsAreTheDocumentedOnes() {
    ServeCommand serve = new ServeCommand();
    serve.options().parse(List.of());
    assertThat(serve.common.bind).isEqualTo("0.0.0.0");
    assertThat(serve.common.logFormat).isEqualTo(Logging.Format.auto);
    assertThat(serve.agents).isEmpty();
    assertThat(serve.cluster).isFalse();
    assertThat(serve.probePort).isNull();
    assertThat(serve.allowedOrigins).isEmpty();
    assertThat(List.of(serve.drainSeconds, serve.bodyTimeoutSeconds, serve.maxConnections))
        .containsExactly(30, 30, 4096);
    // derived from the heap unless given (docs/runtime.md, "Memory")
    assertThat(serve.maxConcurrentRequests).isNull();
    assertThat(serve.maxBodyMib).isNull();
    assertThat(serve.maxBodyMibHeld).isNull();
  }

  @Test
  void mistakesExitWith2AndNameTheOption() {
    assertThat(run("serve", "--agnet", "a")).isEqualTo(2);
    assertThat(err()).contains("serve: unknown option '--agnet' (see pallas-agent-runtime serve");
    assertThat(run("serve", "--max-sessions", "many")).isEqualTo(2);
    assertThat(err()).contains("--max-sessions: 'many' is not a whole number");
    assertThat(run("serve", "--max-sessions", "99999999999")).isEqualTo(2);
    assertThat(err())
        .contains("--max-sessions: 99999999999 is out of range (-2147483648 to 2147483647)");
    assertThat(run("serve", "--agent")).isEqualTo(2);
    assertThat(err()).contains("--agent needs a value (NAME)");
    assertThat(run("serve", "--cluster=yes")).isEqualTo(2);
    assertThat(err()).contains("--cluster takes no value");
    assertThat(run("serve", "extra")).isEqualTo(2);
    assertThat(err()).contains("unexpected argument 'extra'");
    assertThat(run("registry", "--log-format", "xml")).isEqualTo(2);
    assertThat(err()).contains("--log-format: 'xml' is not one of auto, json, text");
    assertThat(run("serv")).isEqualTo(2);
    assertThat(err()).contains("unknown command 'serv'").contains("Usage: pallas-agent-runtime");
    assertThat(run()).isEqualTo(2);
    assertThat(err()).contains("no command given");
    assertThat(out()).isEmpty();
  }

  @Test
  void helpAndVersionExitWith0() {
    assertThat(run("--help")).isZero();
    assertThat(out()).contains("serve     " + ServeCommand.DESCRIPTION);
    assertThat(run("-V")).isZero();
    assertThat(out()).contains("pallas-agent-runtime dev");
    assertThat(run("serve", "--max-sessions", "7", "-h")).isZero();
    assertThat(out())
        .contains("Usage: pallas-agent-runtime serve [OPTIONS]")
        .contains("-f, --file FILE")
        .contains("--drain-timeout SECONDS")
        .contains("On SIGTERM, wait this long for calls in progress (default: 30)")
        .contains("-h, --help");
    assertThat(err()).isEmpty();
  }

  /** docs/configuration.md's table lists exactly the options each command has. */
  @Test
  void theConfigurationDocListsEveryOption() throws IOException {
    Map<String, String> documented = new TreeMap<>();
    Matcher row =
        Pattern.compile("(?m)^\\| `(-[^`]+)` \\| (serve|registry|both) \\|")
            .matcher(Files.readString(Path.of("../docs/configuration.md")));
    while (row.find()) {
      documented.put(row.group(1).replaceAll(" [A-Z]+$", ""), row.group(2));
    }
    Map<String, String> actual = new TreeMap<>();
    List<List<String>> serve = new ServeCommand().options().names();
    List<List<String>> registry = new RegistryCommand().options().names();
    for (List<String> names : serve) {
      actual.put(String.join(", ", names), registry.contains(names) ? "both" : "serve");
    }
    for (List<String> names : registry) {
      actual.putIfAbsent(String.join(", ", names), "registry");
    }
    assertThat(documented).isEqualTo(actual);
    assertThat(new ArrayList<>(actual.keySet())).contains("-f, --file", "--probe-port");
  }
}
