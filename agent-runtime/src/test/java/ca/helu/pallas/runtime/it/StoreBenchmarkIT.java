package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.runtime.store.PostgresStore;
import ca.helu.pallas.runtime.store.StoreConfig;
import ca.helu.pallas.runtime.testing.Benchmarks;
import ca.helu.pallas.runtime.testing.PostgresServer;
import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import com.fasterxml.jackson.databind.JsonNode;
import com.sun.management.OperatingSystemMXBean;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessageSerializer;
import dev.langchain4j.data.message.UserMessage;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What the PostgreSQL store costs (issue 17 §6, docs/benchmarks.md "Conversation store"); it prints
 * the figures. In one JVM, two fleets side by side, one keeping histories in memory and one in a
 * real PostgreSQL, measured in alternating rounds: the latency a turn gains (p50, p99), the CPU per
 * call of this JVM (the runtime and its raw-HTTP client) and of PostgreSQL's processes; then, with
 * 100,000 conversations in the store, a new runtime's start, its heap, and the history prompt's
 * latency against an empty store.
 */
class StoreBenchmarkIT {
  @RegisterExtension static final PostgresServer PG = new PostgresServer();
  private static final OperatingSystemMXBean OS =
      (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
  private static final int CALLS = 400;
  private static final int ROUNDS = 5;
  private static final int CONVERSATIONS = 100_000;

  private static final String FLEET =
      """
      apiVersion: pallas.helu.ca/v1alpha1
      kind: PallasDeployment
      metadata: {name: bench}
      spec:
        registry: {port: ${port:registry}}
        defaultModel: passthrough
        agents:
          - {name: s, port: ${port:s}, instanceScope: shared, requestParams: {maxTokens: 64}}
          - {name: c, port: ${port:c}, instanceScope: connection}
      """;

  private static RunningFleet withStore(String url) {
    return RunningFleet.start(
        FLEET,
        ca.helu.pallas.runtime.serve.DefaultAgentParts.Timings.DEFAULT,
        metrics ->
            new PostgresStore(
                StoreConfig.of(url, PostgresServer.USER, PostgresServer.PASSWORD),
                "bench",
                metrics::storeUp));
  }

  @Test
  void measureTheStore() throws Exception {
    String url = PG.newDatabase();
    try (RunningFleet memory = RunningFleet.start(FLEET);
        RunningFleet stored = withStore(url)) {
      // a connection-scope agent: each session its own conversation, as most clients hold
      RawMcp inMemory = RawMcp.open(memory.mcpUrl("c"), null);
      RawMcp inStore = RawMcp.open(stored.mcpUrl("c"), null);
      Benchmarks.calls(inMemory, 200); // warm-up: classes, pools, JIT
      Benchmarks.calls(inStore, 200);
      // fresh sessions, so each history stays small as in the measured calls
      List<Long> memoryNanos = new ArrayList<>();
      List<Long> storeNanos = new ArrayList<>();
      long memoryCpu = 0;
      long storeCpu = 0;
      long pgCpu = 0;
      for (int round = 0; round < ROUNDS; round++) {
        RawMcp m = RawMcp.open(memory.mcpUrl("c"), null);
        long cpu = OS.getProcessCpuTime();
        memoryNanos.addAll(Benchmarks.calls(m, CALLS));
        memoryCpu += OS.getProcessCpuTime() - cpu;
        m.delete();
        RawMcp st = RawMcp.open(stored.mcpUrl("c"), null);
        cpu = OS.getProcessCpuTime();
        long pg = PG.cpuNanos();
        storeNanos.addAll(Benchmarks.calls(st, CALLS));
        storeCpu += OS.getProcessCpuTime() - cpu;
        pgCpu += PG.cpuNanos() - pg;
        st.delete();
      }
      long n = (long) CALLS * ROUNDS;
      System.out.printf(
          "store benchmark: send_message (connection scope, passthrough, one client, %d calls in"
              + " %d alternating rounds): memory p50 %.2f ms p99 %.2f ms; PostgreSQL p50 %.2f ms"
              + " p99 %.2f ms; added p50 %.2f ms p99 %.2f ms%n",
          n,
          ROUNDS,
          Benchmarks.ms(Benchmarks.percentile(memoryNanos, 50)),
          Benchmarks.ms(Benchmarks.percentile(memoryNanos, 99)),
          Benchmarks.ms(Benchmarks.percentile(storeNanos, 50)),
          Benchmarks.ms(Benchmarks.percentile(storeNanos, 99)),
          Benchmarks.ms(
              Benchmarks.percentile(storeNanos, 50) - Benchmarks.percentile(memoryNanos, 50)),
          Benchmarks.ms(
              Benchmarks.percentile(storeNanos, 99) - Benchmarks.percentile(memoryNanos, 99)));
      System.out.printf(
          "store benchmark: CPU per call of this JVM (runtime + client): memory %d us, PostgreSQL"
              + " store %d us; PostgreSQL's own processes %d us per call%n",
          memoryCpu / n / 1000, storeCpu / n / 1000, pgCpu / n / 1000);
      assertThat(storeNanos).hasSize((int) n);
    }

    // 100,000 stored conversations: what a new runtime does with them
    String empty = PG.newDatabase();
    String full = PG.newDatabase();
    try (RunningFleet migrate = withStore(full)) {
      RawMcp.open(migrate.mcpUrl("c"), null).callTool("send_message", Map.of("message", "x"));
    }
    PostgresServer.sql(
        full,
        "INSERT INTO pallas_conversation (deployment, agent, session_id, chars)"
            + " SELECT 'bench', 'c', 'session-' || i, 40 FROM generate_series(1, "
            + CONVERSATIONS
            + ") i");
    String turn =
        ChatMessageSerializer.messagesToJson(
            List.of(UserMessage.from("hello, a stored turn"), AiMessage.from("hello")));
    PostgresServer.sql(
        full,
        "INSERT INTO pallas_turn (conversation_id, seq, messages, chars) SELECT id, 1, '"
            + turn.replace("'", "''")
            + "', 40 FROM pallas_conversation WHERE session_id LIKE 'session-%'");
    PostgresServer.sql(full, "ANALYZE");
    for (String db : List.of(empty, full)) {
      String label = db.equals(empty) ? "empty store" : CONVERSATIONS + " conversations";
      long heapBefore = heapAfterGc();
      long start = System.nanoTime();
      try (RunningFleet fleet = withStore(db)) {
        RawMcp first = RawMcp.open(fleet.mcpUrl("c"), null);
        first.callTool("send_message", Map.of("message", "warm"));
        long ready = System.nanoTime() - start;
        long heap = heapAfterGc() - heapBefore;
        List<Long> prompt = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
          long t = System.nanoTime();
          JsonNode history = first.request("prompts/get", Map.of("name", "c_history"));
          prompt.add(System.nanoTime() - t);
          assertThat(history.path("messages")).hasSize(2);
        }
        System.out.printf(
            "store benchmark: %s: start to first answer %d ms, heap %+d MiB, history prompt p50"
                + " %.2f ms p99 %.2f ms%n",
            label,
            ready / 1_000_000,
            heap >> 20,
            Benchmarks.ms(Benchmarks.percentile(prompt, 50)),
            Benchmarks.ms(Benchmarks.percentile(prompt, 99)));
        assertThat(heap).as("the runtime loads no stored conversation").isLessThan(32L << 20);
      }
    }
  }

  private static long heapAfterGc() {
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    var heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
    return heap.getUsed();
  }
}
