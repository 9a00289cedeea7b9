package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.runtime.testing.HttpStatus;
import ca.helu.pallas.runtime.testing.ImageTool;
import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The agent-runtime image this build writes (docs/images.md): its config, and its own entrypoint
 * run the way a container runtime runs it (images/image.py: the layers as root filesystem, the
 * image's user and environment, private mount and PID namespaces), serving one agent of a manifest
 * until {@code /readyz} answers, then draining on SIGTERM, as the image's user and as an arbitrary
 * UID in group 0, the way OpenShift's restricted-v2 SCC runs it. Needs root, as a container runtime
 * does.
 */
class ImageIT {

  private static final Path IMAGE =
      Path.of("target", "pallas-agent-runtime-image.tar").toAbsolutePath();
  private static final Path IMAGE_TOOL = ImageTool.SCRIPT;
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  static JsonNode config(Path image) throws Exception {
    Process p =
        new ProcessBuilder("python3", IMAGE_TOOL.toString(), "config", image.toString())
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    byte[] out = p.getInputStream().readAllBytes();
    assertThat(p.waitFor()).as("image.py config %s", image).isZero();
    return JSON.readTree(out).get("config");
  }

  /**
   * Resident KiB of a process's mappings of the AOT cache, and how many of them are its own copies
   * (written or relocated pages: "Anonymous" in /proc/PID/smaps; "Private_Dirty" would also count
   * the file's pages not yet written back since the image was unpacked).
   */
  private static long[] aotCachePages(long pid) throws IOException {
    long rss = 0;
    long copied = 0;
    boolean aot = false;
    for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "smaps"))) {
      String[] words = line.trim().split("\\s+");
      if (words[0].matches("[0-9a-f]+-[0-9a-f]+")) {
        aot = words[words.length - 1].endsWith("/pallas.aot");
      } else if (aot && words[0].equals("Rss:")) {
        rss += Long.parseLong(words[1]);
      } else if (aot && words[0].equals("Anonymous:")) {
        copied += Long.parseLong(words[1]);
      }
    }
    return new long[] {rss, copied};
  }

  @Test
  void theImageConfigIsWhatThePodsExpect() throws Exception {
    JsonNode config = config(IMAGE);
    assertThat(config.get("User").asText()).isEqualTo("65532:65532");
    assertThat(JSON.convertValue(config.get("Entrypoint"), List.class))
        .startsWith("java", "-XX:AOTCache=/app/aot/pallas.aot")
        .contains("-XX:MaxRAMPercentage=75", "-XX:+ExitOnOutOfMemoryError", "-XX:-UsePerfData")
        .contains("-XX:ArchiveRelocationMode=0", "-XX:TrimNativeHeapInterval=5000")
        // the shaded jar alone: one jar to open on the way to ready (docs/images.md)
        .containsSequence("-cp", "/app/classpath/pallas-agent-runtime.jar")
        .endsWith("ca.helu.pallas.runtime.cli.Main");
    // the operator renders only args (serve -f ... --agent NAME): no Cmd may prepend anything
    assertThat(config.path("Cmd").isMissingNode() || config.get("Cmd").isNull()).isTrue();
    assertThat(JSON.convertValue(config.get("Env"), List.class))
        .contains("JAVA_HOME=/opt/java", "PATH=/opt/java/bin:/usr/bin:/bin", "HOME=/tmp");
    assertThat(config.get("ExposedPorts").has("24200/tcp")).isTrue();
    assertThat(config.get("Labels").get("org.opencontainers.image.title").asText())
        .isEqualTo("pallas-agent-runtime");
    assertThat(config.get("Labels").has("org.opencontainers.image.version")).isTrue();
    assertThat(config.get("WorkingDir").asText()).isEqualTo("/home/nonroot");
  }

  /**
   * Whoever runs the image reads all of it and writes its HOME, /tmp (the pods' emptyDir): its own
   * user, and a UID it does not know in group 0, as OpenShift assigns one.
   */
  @ParameterizedTest
  @ValueSource(strings = {"65532", ImageTool.ARBITRARY_UID})
  void anyUserReadsEveryFileAndWritesItsHome(String user) throws Exception {
    assertThat(ImageTool.unreadable(IMAGE, user)).isEmpty();
  }

  /** "" is the image's own user; else the pod's runAsUser, without a group (so group 0). */
  @ParameterizedTest
  @ValueSource(strings = {"", ImageTool.ARBITRARY_UID})
  void theEntrypointServesAnAgentAndDrainsOnSigterm(String user, @TempDir Path dir)
      throws Exception {
    Path manifest = dir.resolve("deployment.yaml");
    Files.writeString(
        manifest,
        RunningFleet.withFreePorts(
            """
            apiVersion: pallas.helu.ca/v1alpha1
            kind: PallasDeployment
            metadata: {name: image}
            spec:
              registry: {port: ${port:registry}}
              defaultModel: passthrough
              agents:
                - {name: helper, port: ${port:helper}}
            """));
    var helperPort =
        Pattern.compile("name: helper, port: (\\d+)").matcher(Files.readString(manifest));
    assertThat(helperPort.find()).isTrue();
    int port = Integer.parseInt(helperPort.group(1));
    Path log = dir.resolve("pod.log");
    List<String> command =
        new ArrayList<>(
            List.of(
                "python3",
                IMAGE_TOOL.toString(),
                "run",
                IMAGE.toString(),
                "--file",
                manifest + ":/etc/pallas/deployment.yaml",
                // the JVM exits rather than start without the image's AOT cache; the heap and
                // collector the JVM picks under a pod's 512 MiB limit, which it cannot see here
                "--env",
                "JAVA_TOOL_OPTIONS=-XX:AOTMode=on -XX:MaxRAM=512m -XX:+UseSerialGC"));
    if (!user.isEmpty()) {
      command.addAll(List.of("--user", user));
    }
    command.addAll(
        List.of("--", "serve", "-f", "/etc/pallas/deployment.yaml", "--agent", "helper"));
    Process pod =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    try {
      await()
          .atMost(Duration.ofSeconds(60))
          .failFast("the image's process exited", () -> !pod.isAlive())
          .until(() -> HttpStatus.of("http://127.0.0.1:" + port + "/readyz") == 200);
      JsonNode health =
          JSON.readTree(
              RawMcp.text(
                  RawMcp.open("http://127.0.0.1:" + port + "/mcp", null)
                      .callTool("get_health", Map.of())));
      assertThat(health.get("status").asText()).isEqualTo("ok");

      // the JVM runs as the image's non-root user, or as the UID given in group 0, HOME in /tmp
      ProcessHandle java =
          pod.descendants()
              .filter(p -> comm(p).equals("java"))
              .findFirst()
              .orElseThrow(() -> new AssertionError("no java process under " + pod.pid()));
      String uid = user.isEmpty() ? "65532" : user;
      String gid = user.isEmpty() ? "65532" : "0";
      Path proc = Path.of("/proc", Long.toString(java.pid()));
      assertThat(Files.readAllLines(proc.resolve("status")))
          .anySatisfy(line -> assertThat(line).matches("Uid:(\\s+" + uid + "){4}"))
          .anySatisfy(line -> assertThat(line).matches("Gid:(\\s+" + gid + "){4}"));
      assertThat(
              new String(Files.readAllBytes(proc.resolve("environ")), StandardCharsets.UTF_8)
                  .split("\0"))
          .contains("HOME=/tmp");
      assertThat(
              new String(
                  Files.readAllBytes(Path.of("/proc", Long.toString(java.pid()), "cmdline")),
                  StandardCharsets.UTF_8))
          .contains("-XX:AOTCache=/app/aot/pallas.aot");
      // the cache is mapped where it was written (docs/images.md, "Memory"): most of its resident
      // pages are the image file's; relocated, about 80 % would be the process's own copies (37
      // of 47 MiB measured, against 17 of 46 in place)
      long[] aot = aotCachePages(java.pid());
      assertThat(aot[0]).as("KiB of the AOT cache resident").isPositive();
      assertThat(aot[1]).as("KiB of it copied (of %d resident)", aot[0]).isLessThan(aot[0] / 2);
    } finally {
      pod.destroy(); // SIGTERM, forwarded to the entrypoint
      assertThat(pod.waitFor(60, TimeUnit.SECONDS)).as("stops on SIGTERM").isTrue();
    }
    // 128 + SIGTERM once the shutdown hooks (the drain) have run, as for `java -jar`
    assertThat(pod.exitValue()).as(Files.readString(log)).isEqualTo(143);
    assertThat(Files.readString(log))
        .contains("shutting down: draining calls in progress")
        .doesNotContain("sun.misc.Unsafe");
  }

  private static String comm(ProcessHandle p) {
    try {
      return Files.readString(Path.of("/proc", Long.toString(p.pid()), "comm")).strip();
    } catch (IOException e) {
      return "";
    }
  }
}
