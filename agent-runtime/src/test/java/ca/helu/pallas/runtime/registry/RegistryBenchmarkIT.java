package ca.helu.pallas.runtime.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.runtime.serve.DefaultAgentParts;
import ca.helu.pallas.runtime.testing.Benchmarks;
import ca.helu.pallas.runtime.testing.GeneratedTools;
import ca.helu.pallas.runtime.testing.McpClients;
import ca.helu.pallas.runtime.testing.RunningFleet;
import ca.helu.pallas.runtime.testing.TestMcpServer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The registry's figures (issue 20 §4; docs/benchmarks.md, "The registry's MCP endpoint"):
 * find_tools over 1,000 indexed tools, the time from a server breaking to a registry subscriber's
 * notification, and the registry's memory following 50 agents and 500 tools. Printed, not asserted
 * against the targets.
 */
class RegistryBenchmarkIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int WARM_UP = 3_000;
  private static final int MEASURED = 1_000;

  @TempDir Path dir;

  @Test
  void findToolsOverAThousandTools() throws Exception {
    // the search alone: 1,000 tools of five servers
    List<IndexedTool> indexed = new ArrayList<>();
    for (int s = 0; s < 5; s++) {
      for (McpSchema.Tool tool : GeneratedTools.of(s, 200)) {
        indexed.add(
            IndexedTool.of(
                "server" + s,
                IndexedTool.SERVER,
                JSON.readTree(McpJsonDefaults.getMapper().writeValueAsString(tool))));
      }
    }
    long built = System.nanoTime();
    ToolSearch search = new ToolSearch(indexed);
    double buildMs = Benchmarks.ms(System.nanoTime() - built);
    List<String> queries = GeneratedTools.queries(12_000, 7);
    for (String q : queries.subList(0, 2_000)) {
      search.find(q, 5);
    }
    List<Long> alone = new ArrayList<>();
    for (String q : queries.subList(2_000, 12_000)) {
      long t = System.nanoTime();
      assertThat(search.find(q, 5)).isNotEmpty();
      alone.add(System.nanoTime() - t);
    }
    System.out.printf(
        "find_tools search alone over %d tools: p50 %.3f ms, p99 %.3f ms (index built in %.1f ms)%n",
        search.size(),
        Benchmarks.ms(Benchmarks.percentile(alone, 50)),
        Benchmarks.ms(Benchmarks.percentile(alone, 99)),
        buildMs);

    // through MCP: five agents (three tools each) and five servers of 197 tools
    List<TestMcpServer> servers = new ArrayList<>();
    StringBuilder mcpServers = new StringBuilder();
    StringBuilder agents = new StringBuilder();
    try {
      for (int s = 0; s < 5; s++) {
        TestMcpServer server = TestMcpServer.start();
        for (McpSchema.Tool tool : GeneratedTools.of(s, 192)) {
          server.addTool(tool, "done");
        }
        servers.add(server);
        mcpServers.append("    - {name: s%d, url: \"%s\"}\n".formatted(s, server.url()));
        agents.append("    - {name: a%d, port: ${port:a%d}, servers: [s%d]}\n".formatted(s, s, s));
      }
      try (RunningFleet fleet =
              RunningFleet.start(
                  """
                  apiVersion: pallas.helu.ca/v1alpha1
                  kind: PallasDeployment
                  metadata: {name: thousand}
                  spec:
                    registry: {port: ${port:registry}}
                    defaultModel: passthrough
                    mcpServers:
                  %s  agents:
                  %s\
                  """
                      .formatted(mcpServers, agents));
          McpSyncClient client = McpClients.connect(fleet.registryBase() + "/mcp")) {
        // TestMcpServer's five tools each, and the generated ones: a first question waits 10 s at
        // most for the agents' first listings, which a busy machine may take longer to give
        JsonNode first =
            await()
                .atMost(Duration.ofSeconds(60))
                .until(
                    () -> find(client, "cancel the flight"),
                    found -> found.get("indexedTools").asInt() == 5 * 3 + 5 * (5 + 192));
        // a registry serves for days: measured once the JIT has compiled the path, not while it
        // does (the first few thousand calls of a new JVM, on this 2-core machine)
        List<String> mcpQueries = GeneratedTools.queries(WARM_UP + MEASURED, 11);
        for (String q : mcpQueries.subList(0, WARM_UP)) {
          find(client, q);
          client.ping();
        }
        List<Long> rounds = new ArrayList<>();
        List<Long> pings = new ArrayList<>();
        for (String q : mcpQueries.subList(WARM_UP, WARM_UP + MEASURED)) {
          long t = System.nanoTime();
          find(client, q);
          rounds.add(System.nanoTime() - t);
          t = System.nanoTime();
          client.ping();
          pings.add(System.nanoTime() - t);
        }
        System.out.printf(
            "find_tools through MCP over %d tools: p50 %.2f ms, p99 %.2f ms (%d calls after %d);"
                + " a ping on the same session: p50 %.2f ms, p99 %.2f ms%n",
            first.get("indexedTools").asInt(),
            Benchmarks.ms(Benchmarks.percentile(rounds, 50)),
            Benchmarks.ms(Benchmarks.percentile(rounds, 99)),
            rounds.size(),
            WARM_UP,
            Benchmarks.ms(Benchmarks.percentile(pings, 50)),
            Benchmarks.ms(Benchmarks.percentile(pings, 99)));
      }
    } finally {
      servers.forEach(TestMcpServer::close);
    }
  }

  private static JsonNode find(McpSyncClient client, String query) {
    McpSchema.CallToolResult result =
        client.callTool(new McpSchema.CallToolRequest("find_tools", Map.of("query", query)));
    assertThat(result.isError()).isNotEqualTo(Boolean.TRUE);
    return JSON.valueToTree(result.structuredContent());
  }

  @Test
  void fromAServerBreakingToTheRegistrySubscribersNotification() throws Exception {
    int port = RunningFleet.unboundPort();
    TestMcpServer server = TestMcpServer.start(TestMcpServer.Mode.MCP, port);
    DefaultAgentParts.Timings timings =
        DefaultAgentParts.Timings.DEFAULT.withHealthInterval(Duration.ofMillis(200));
    String uri = "pallas://agents/watched/health";
    List<String> updates = new CopyOnWriteArrayList<>();
    List<Long> times = new CopyOnWriteArrayList<>();
    List<Long> took = new ArrayList<>();
    try (RunningFleet fleet =
            RunningFleet.start(
                """
                apiVersion: pallas.helu.ca/v1alpha1
                kind: PallasDeployment
                metadata: {name: breaks}
                spec:
                  registry: {port: ${port:registry}}
                  defaultModel: passthrough
                  mcpServers: [{name: flaky, url: "http://127.0.0.1:%d/mcp"}]
                  agents:
                    - {name: watched, port: ${port:watched}, servers: [flaky]}
                """
                    .formatted(port),
                Map.of(),
                timings);
        McpSyncClient client =
            McpClients.watching(
                fleet.registryBase() + "/mcp",
                contents ->
                    contents.forEach(c -> {
                      if (c.uri().equals(uri)) {
                        times.add(System.nanoTime());
                        updates.add(((McpSchema.TextResourceContents) c).text());
                      }
                    }))) {
      client.subscribeResource(new McpSchema.SubscribeRequest(uri));
      for (int round = 0; round < 7; round++) {
        await().atMost(Duration.ofSeconds(10)).until(() -> status(client, uri).equals("ok"));
        int seen = updates.size();
        long broken = System.nanoTime();
        server.kill();
        await()
            .atMost(Duration.ofSeconds(10))
            .until(() ->
                updates.subList(seen, updates.size()).stream()
                    .anyMatch(u -> u.contains("degraded")));
        for (int i = seen; i < updates.size(); i++) {
          if (updates.get(i).contains("degraded")) {
            took.add(times.get(i) - broken);
            break;
          }
        }
        server = TestMcpServer.start(TestMcpServer.Mode.MCP, port);
      }
    } finally {
      server.close();
    }
    System.out.printf(
        "server break to registry subscriber's update (agent probes every 200 ms): median %.0f ms,"
            + " max %.0f ms over %d breaks%n",
        Benchmarks.ms(Benchmarks.percentile(took, 50)),
        Benchmarks.ms(Benchmarks.percentile(took, 100)),
        took.size());
  }

  private static String status(McpSyncClient client, String uri) throws IOException {
    return JSON.readTree(McpClients.resourceText(client, uri)).get("status").asText();
  }

  /**
   * The registry command's process (the jar, as its pod runs it) following 50 agents that list 500
   * tools between them: its heap after a full GC and its resident memory, before its MCP endpoint
   * is used (no link open) and once it follows every agent.
   */
  @Test
  void registryMemoryFollowingFiftyAgentsAndFiveHundredTools() throws Exception {
    Path jar = Path.of("target/pallas-agent-runtime.jar").toAbsolutePath();
    assertThat(jar).exists();
    List<TestMcpServer> servers = new ArrayList<>();
    StringBuilder mcpServers = new StringBuilder();
    StringBuilder agents = new StringBuilder();
    Process registry = null;
    try {
      for (int s = 0; s < 7; s++) {
        TestMcpServer server = TestMcpServer.start();
        for (McpSchema.Tool tool : GeneratedTools.of(s, 45)) {
          server.addTool(tool, "done");
        }
        servers.add(server);
        mcpServers.append("    - {name: s%d, url: \"%s\"}\n".formatted(s, server.url()));
      }
      for (int a = 0; a < 50; a++) {
        agents.append(
            "    - {name: a%d, port: ${port:a%d}, servers: [s%d]}\n".formatted(a, a, a % 7));
      }
      String manifest =
          RunningFleet.withFreePorts(
              """
              apiVersion: pallas.helu.ca/v1alpha1
              kind: PallasDeployment
              metadata: {name: fifty}
              spec:
                host: 127.0.0.1
                registry: {port: ${port:registry}}
                defaultModel: passthrough
                mcpServers:
              %s  agents:
              %s\
              """
                  .formatted(mcpServers, agents));
      try (RunningFleet fleet = RunningFleet.start(manifest.replace("  host: 127.0.0.1\n", ""))) {
        // the same ports for the registry command: a registry of its own on another port
        int port = RunningFleet.freePort();
        String own =
            manifest.replaceFirst("registry: \\{port: \\d+}", "registry: {port: " + port + "}");
        Path file = dir.resolve("fifty.yaml");
        Files.writeString(file, own);
        registry =
            new ProcessBuilder(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-XX:MaxRAM=512m",
                    "-jar",
                    jar.toString(),
                    "registry",
                    "-f",
                    file.toString(),
                    "--bind",
                    "127.0.0.1")
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("registry.log").toFile())
                .start();
        String mcp = "http://127.0.0.1:" + port + "/mcp";
        Process started = registry;
        await()
            .atMost(Duration.ofSeconds(60))
            .until(() ->
                started.isAlive()
                    && ca.helu.pallas.runtime.testing.HttpStatus.of(
                            "http://127.0.0.1:" + port + "/readyz")
                        == 200);
        String idle = memory(registry);
        try (McpSyncClient client = McpClients.connect(mcp)) {
          await()
              .atMost(Duration.ofSeconds(60))
              .until(() -> find(client, "cancel the flight").get("indexedTools").asInt() == 500);
          String following = memory(registry);
          System.out.printf(
              "registry process, 50 agents and 500 tools: idle %s; following them %s%n",
              idle, following);
        }
      }
    } finally {
      if (registry != null) {
        registry.destroy();
        registry.waitFor(10, TimeUnit.SECONDS);
      }
      servers.forEach(TestMcpServer::close);
    }
  }

  private static final Pattern HEAP_USED = Pattern.compile("used (\\d+)K");
  private static final Pattern RSS = Pattern.compile("VmRSS:\\s+(\\d+) kB");

  /** Heap in use after a full GC and resident memory of {@code process}, in MiB. */
  private static String memory(Process process) throws Exception {
    String jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
    String pid = Long.toString(process.pid());
    run(jcmd, pid, "GC.run");
    Matcher heap = HEAP_USED.matcher(run(jcmd, pid, "GC.heap_info"));
    assertThat(heap.find()).isTrue();
    Matcher rss = RSS.matcher(Files.readString(Path.of("/proc", pid, "status")));
    assertThat(rss.find()).isTrue();
    return "heap %.1f MiB after GC, RSS %.0f MiB"
        .formatted(Long.parseLong(heap.group(1)) / 1024.0, Long.parseLong(rss.group(1)) / 1024.0);
  }

  private static String run(String... command) throws Exception {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    p.waitFor(30, TimeUnit.SECONDS);
    return out;
  }
}
