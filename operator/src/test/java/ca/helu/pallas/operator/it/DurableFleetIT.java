package ca.helu.pallas.operator.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.operator.testing.NodeCluster;
import ca.helu.pallas.operator.testing.PodMemory;
import ca.helu.pallas.operator.testing.Readme;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Conversations that survive, on a real node (issue 17 §5; docs/install.md, "A durable fleet"): the
 * chart installed with its PostgreSQL as install.md says (the image built by
 * e2e/cluster/tool-images.py, the volume a hostPath PersistentVolume, as on a node without a
 * provisioner), examples/durable/fleet.yaml (a shared helper and a connection-scope coordinator
 * calling it, three replicas each). Twenty Daedalus-like clients (e2e/python/durable_clients.py,
 * the official Python SDK, no re-initialization), ten on the helper and ten on the coordinator
 * relaying every turn to the helper, hold their conversations through the Services' cluster
 * addresses while both agents are rolled, one pod of each is deleted, and both are scaled 3 → 1 →
 * 3; then again with {@code sessionAffinity: ClientIP} through a rollout. Every call is answered
 * and every turn is in its conversation's history, in order. The tests run in order on one cluster.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DurableFleetIT {
  private static final Duration LONG = Duration.ofMinutes(10);
  private static final String FLEET = "durable";
  private static final List<String> AGENTS = List.of("helper", "coordinator");
  private static final Pattern COUNT =
      Pattern.compile("^(turns made|turns found|calls failed|calls per second) ([0-9.]+)$");
  private static Path dir;
  private static NodeCluster cluster;
  private static int instruction;

  @BeforeAll
  static void up() throws Exception {
    dir = Files.createTempDirectory("pallas-cluster");
    cluster = NodeCluster.up(dir);
    // the clients' Python and its MCP SDK (e2e/setup.sh, cached)
    cluster.sh("e2e/setup.sh", LONG).ok();
  }

  @AfterAll
  static void down() throws Exception {
    if (cluster != null) {
      cluster.down().ok();
    }
  }

  /**
   * README's two commands, with the image this node has: the chart's PostgreSQL runs (its volume a
   * PersistentVolume on the node) and the fleet's six agent pods reach it.
   */
  @Test
  @Order(1)
  void theDurableExampleRunsOnTheChartsPostgresql() throws Exception {
    List<String> commands = Readme.block("### Conversations that survive restarts");
    assertThat(commands)
        .as("README's and install.md's commands")
        .isEqualTo(
            Readme.block(NodeCluster.ROOT.resolve("docs/install.md"), "### A durable fleet"));
    long start = System.nanoTime();
    cluster.installWithPostgresql(commands.get(0));
    System.out.printf("helm install to PostgreSQL and operator ready %.1f s%n", seconds(start));

    start = System.nanoTime();
    assertThat(cluster.sh(commands.get(1), LONG).ok())
        .contains("pallasdeployment.pallas.helu.ca/durable created");
    cluster.kubectl("wait", "pallas/durable", "--for=condition=Ready", "--timeout=600s");
    System.out.printf("kubectl apply to Ready=True (6 agent pods) %.1f s%n", seconds(start));
    for (String agent : AGENTS) {
      assertThat(readyPods(agent)).hasSize(3);
    }
    // the agents use the database: a short run of clients keeps and finds its turns
    Outcome warmUp = new Clients("warm").turns(2).call();
    assertThat(warmUp.failures()).isEmpty();
    assertThat(warmUp.found()).isEqualTo(warmUp.made()).isEqualTo(20 * 3);

    // what an agent pod with the store costs (issue 21 §4; docs/benchmarks.md, "Real cluster")
    for (String agent : AGENTS) {
      List<String> uids = pods(agent, "{.items[*].metadata.uid}");
      List<Long> workingSets = PodMemory.settledWorkingSetsMiB(uids);
      List<Long> pageCache = new ArrayList<>();
      for (String uid : uids) {
        pageCache.add(PodMemory.activePageCacheBytes(uid) >> 20);
      }
      assertThat(workingSets).hasSize(3);
      System.out.printf(
          "%s pods with the conversation store, after their first turns: working set %s MiB, of"
              + " which page cache %s MiB%n",
          agent, workingSets, pageCache);
    }
  }

  /**
   * Without session affinity, every request of a session may reach any of the three pods: both
   * agents rolled by a spec change, one pod of each deleted, both scaled to one pod and back to
   * three, while the clients keep calling. No call fails, no turn is lost.
   */
  @Test
  @Order(2)
  void noCallFailsAndNoTurnIsLostThroughARolloutAPodDeletedAndScaling() throws Exception {
    assertThat(affinity()).isEqualTo("None None");
    try (Clients clients = new Clients("a").untilStopped()) {
      long start = System.nanoTime();
      rollBothAgents();
      System.out.printf("rollout of both agents (3 pods each) %.1f s%n", seconds(start));

      start = System.nanoTime();
      Set<String> deleted = new HashSet<>();
      for (String agent : AGENTS) {
        deleted.add(pods(agent).getFirst());
      }
      List<String> delete = new ArrayList<>(List.of("delete", "pod", "--wait=false"));
      delete.addAll(deleted);
      cluster.kubectl(delete.toArray(String[]::new));
      awaitPods(3, deleted);
      System.out.printf("one pod of each deleted, replaced in %.1f s%n", seconds(start));

      start = System.nanoTime();
      scale(1);
      awaitPods(1, Set.of());
      scale(3);
      awaitPods(3, Set.of());
      System.out.printf("both scaled 3 -> 1 -> 3 in %.1f s%n", seconds(start));

      Outcome outcome = clients.stop();
      assertThat(outcome.failures()).as("calls failed").isEmpty();
      assertThat(outcome.found()).as("turns found").isEqualTo(outcome.made());
      assertThat(outcome.made()).isGreaterThan(20 * 5);
    }
  }

  /** The same clients with {@code sessionAffinity: ClientIP} on both agents, through a rollout. */
  @Test
  @Order(3)
  void noCallFailsAndNoTurnIsLostThroughARolloutWithClientIpAffinity() throws Exception {
    cluster.kubectl(
        "patch",
        "pallas",
        FLEET,
        "--type=json",
        "-p=[{\"op\":\"add\",\"path\":\"/spec/agents/0/sessionAffinity\",\"value\":\"ClientIP\"},"
            + "{\"op\":\"add\",\"path\":\"/spec/agents/1/sessionAffinity\",\"value\":\"ClientIP\"}]");
    await()
        .atMost(Duration.ofMinutes(2))
        .pollInterval(Duration.ofSeconds(1))
        .until(DurableFleetIT::affinity, "ClientIP ClientIP"::equals);
    try (Clients clients = new Clients("b").untilStopped()) {
      long start = System.nanoTime();
      rollBothAgents();
      System.out.printf("rollout with ClientIP affinity %.1f s%n", seconds(start));
      Outcome outcome = clients.stop();
      assertThat(outcome.failures()).as("calls failed").isEmpty();
      assertThat(outcome.found()).as("turns found").isEqualTo(outcome.made());
      assertThat(outcome.made()).isGreaterThan(20 * 5);
    }
  }

  /** A spec change of both agents (their instructions), awaited until no old pod is left. */
  private static void rollBothAgents() throws Exception {
    Set<String> before = new HashSet<>();
    for (String agent : AGENTS) {
      before.addAll(pods(agent));
    }
    instruction++;
    cluster.kubectl(
        "patch",
        "pallas",
        FLEET,
        "--type=json",
        "-p=[{\"op\":\"replace\",\"path\":\"/spec/agents/0/instruction\",\"value\":\"You repeat"
            + " what the user says (rollout "
            + instruction
            + ").\"},{\"op\":\"replace\",\"path\":\"/spec/agents/1/instruction\",\"value\":\"You"
            + " delegate to the helper agent (rollout "
            + instruction
            + ").\"}]");
    awaitPods(3, before);
  }

  private static void scale(int replicas) throws Exception {
    cluster.kubectl(
        "patch",
        "pallas",
        FLEET,
        "--type=json",
        "-p=[{\"op\":\"add\",\"path\":\"/spec/agents/0/replicas\",\"value\":"
            + replicas
            + "},{\"op\":\"add\",\"path\":\"/spec/agents/1/replicas\",\"value\":"
            + replicas
            + "}]");
  }

  /**
   * Waits until each agent has exactly {@code count} pods, all ready, none of them in {@code gone}
   * (a terminating pod is still listed, so a drained pod counts until it has exited).
   */
  private static void awaitPods(int count, Set<String> gone) {
    await()
        .atMost(LONG)
        .pollInterval(Duration.ofSeconds(1))
        .until(() -> {
          for (String agent : AGENTS) {
            List<String> pods = pods(agent);
            if (pods.size() != count
                || pods.stream().anyMatch(gone::contains)
                || readyPods(agent).size() != count) {
              return false;
            }
          }
          return true;
        });
  }

  /** The agent's pods, terminating ones included. */
  private static List<String> pods(String agent) throws Exception {
    return new ArrayList<>(readiness(agent).keySet());
  }

  /** The agent's pods that are ready. */
  private static List<String> readyPods(String agent) throws Exception {
    return readiness(agent).entrySet().stream()
        .filter(e -> e.getValue().equals("True"))
        .map(Map.Entry::getKey)
        .toList();
  }

  /** Each pod of the agent, in order of name, and its Ready condition's status. */
  private static Map<String, String> readiness(String agent) throws Exception {
    Map<String, String> pods = new TreeMap<>();
    // "name=True name=False ...": kubectl's JSONPath has no filter inside a filter
    for (String pod :
        pods(
            agent,
            "{range .items[*]}{.metadata.name}="
                + "{.status.conditions[?(@.type==\"Ready\")].status} {end}")) {
      pods.put(pod.substring(0, pod.indexOf('=')), pod.substring(pod.indexOf('=') + 1));
    }
    return pods;
  }

  /** A JSONPath of the agent's pods, its words. */
  private static List<String> pods(String agent, String jsonPath) throws Exception {
    return words(
        cluster.kubectl(
            "get", "pods", "-l", "pallas.helu.ca/agent=" + agent, "-o", "jsonpath=" + jsonPath));
  }

  private static String affinity() throws Exception {
    return cluster.kubectl(
        "get",
        "service",
        "durable-helper",
        "durable-coordinator",
        "-o",
        "jsonpath={.items[*].spec.sessionAffinity}");
  }

  private static List<String> words(String text) {
    return text.isBlank() ? List.of() : List.of(text.strip().split("\\s+"));
  }

  private static String serviceUrl(String agent) throws Exception {
    String service = FLEET + "-" + agent;
    String ip = cluster.kubectl("get", "service", service, "-o", "jsonpath={.spec.clusterIP}");
    String port =
        cluster.kubectl("get", "service", service, "-o", "jsonpath={.spec.ports[0].port}");
    return "http://" + ip + ":" + port + "/mcp";
  }

  private static double seconds(long start) {
    return (System.nanoTime() - start) / 1e9;
  }

  /** What a run of clients counted (their `failed ...` lines, their totals). */
  record Outcome(List<String> failures, int made, int found) {}

  /**
   * Two runs of e2e/python/durable_clients.py from the host: ten clients on the helper, ten on the
   * coordinator relaying to the helper (calls from agent to agent), each on the agent's Service.
   */
  private static final class Clients implements AutoCloseable {
    private final String name;
    private final List<Process> processes = new ArrayList<>();
    private final List<Path> outputs = new ArrayList<>();
    private final Path stop;

    Clients(String name) {
      this.name = name;
      this.stop = dir.resolve("stop-" + name);
    }

    /** Runs each client for {@code turns} turns (and one more), and returns what they counted. */
    Clients turns(int turns) throws Exception {
      start("--turns", String.valueOf(turns));
      return this;
    }

    /** Starts the clients, calling until {@link #stop}; returns once every session is open. */
    Clients untilStopped() throws Exception {
      start("--until-file", stop.toString(), "--pause", "0.2");
      await()
          .atMost(Duration.ofMinutes(2))
          .pollInterval(Duration.ofMillis(200))
          .until(() -> outputs.stream().allMatch(o -> output(o).contains("sessions open 10")));
      return this;
    }

    Outcome stop() throws Exception {
      Files.writeString(stop, "");
      return call();
    }

    Outcome call() throws Exception {
      List<String> failures = new ArrayList<>();
      int made = 0;
      int found = 0;
      for (int i = 0; i < processes.size(); i++) {
        assertThat(processes.get(i).waitFor(10, TimeUnit.MINUTES)).isTrue();
        String printed = output(outputs.get(i));
        Map<String, Double> counts = new HashMap<>();
        List<String> failed = new ArrayList<>();
        for (String line : printed.lines().toList()) {
          Matcher m = COUNT.matcher(line);
          if (m.matches()) {
            counts.put(m.group(1), Double.parseDouble(m.group(2)));
          } else if (line.startsWith("failed ")) {
            failed.add(line);
          }
        }
        assertThat(counts).as(printed).containsKeys("turns made", "turns found", "calls failed");
        System.out.printf(
            "clients %s on %s: turns made %.0f, turns found %.0f, calls failed %.0f, %.1f"
                + " calls/s%n",
            name,
            AGENTS.get(i),
            counts.get("turns made"),
            counts.get("turns found"),
            counts.get("calls failed"),
            counts.get("calls per second"));
        failed.stream().limit(20).forEach(System.out::println);
        failures.addAll(failed);
        made += counts.get("turns made").intValue();
        found += counts.get("turns found").intValue();
      }
      return new Outcome(failures, made, found);
    }

    private void start(String... until) throws Exception {
      for (String agent : AGENTS) {
        List<String> command =
            new ArrayList<>(
                List.of(
                    NodeCluster.ROOT.resolve("e2e/.work/venv/bin/python").toString(),
                    NodeCluster.ROOT.resolve("e2e/python/durable_clients.py").toString(),
                    "--url",
                    serviceUrl(agent),
                    "--agent",
                    agent,
                    "--clients",
                    "10",
                    "--prefix",
                    name + "-" + agent));
        if (agent.equals("coordinator")) {
          command.addAll(List.of("--via", "helper__helper"));
        }
        command.addAll(List.of(until));
        Path output = dir.resolve("clients-" + name + "-" + agent + ".log");
        processes.add(
            new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(output.toFile())
                .start());
        outputs.add(output);
      }
    }

    private static String output(Path file) {
      try {
        return Files.readString(file);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    @Override
    public void close() throws Exception {
      Files.writeString(stop, "");
      for (Process p : processes) {
        if (!p.waitFor(2, TimeUnit.MINUTES)) {
          p.destroyForcibly();
        }
      }
    }
  }
}
