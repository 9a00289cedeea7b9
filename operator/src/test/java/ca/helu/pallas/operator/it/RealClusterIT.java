package ca.helu.pallas.operator.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.testing.NodeCluster;
import ca.helu.pallas.operator.testing.PodMemory;
import ca.helu.pallas.operator.testing.Readme;
import ca.helu.pallas.operator.testing.ToolImages;
import ca.helu.pallas.runtime.Causes;
import ca.helu.pallas.runtime.http.EdgeLimits;
import ca.helu.pallas.runtime.testing.FakeLlmServer;
import ca.helu.pallas.runtime.testing.RawMcp;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpTransportSessionNotFoundException;
import java.io.IOException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * README's "Run it on a cluster", verbatim, on a real node (e2e/cluster/cluster.sh: a kubelet on
 * containerd, kube-proxy and CoreDNS, the images this build made imported, no registry): helm
 * installs the chart and the operator runs as its pod under the chart's ServiceAccount, kubectl
 * applies the quick start into a namespace that enforces Pod Security "restricted", the fleet
 * becomes Ready with real pods, README's port-forward and curl read the registry, and an MCP client
 * on the host calls the coordinator agent through its Service, which calls the helper agent by its
 * cluster DNS name. Then the faults a user meets: a rolling update under load, a killed agent pod,
 * the PallasDeployment deleted. Then OpenShift's way of running pods (tests 10-19: a UID from the
 * namespace's range, in group 0, as its restricted-v2 SCC assigns) and NetworkPolicies enforced
 * (tests 20-29: the node runs kube-router's firewall). Afterwards `down` leaves the host as it
 * found it. The tests run in order on one cluster: the later ones use the quick start the first one
 * installed.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RealClusterIT {
  private static final Duration LONG = Duration.ofMinutes(6);

  /**
   * UIDs as OpenShift's restricted-v2 SCC assigns them: the first of each namespace's range
   * (pallas-system's, and the namespace "scc"'s), unknown to every image, run in group 0 with the
   * UID as fsGroup (docs/install.md, "OpenShift").
   */
  private static final long SYSTEM_UID = 1000640000;

  private static final long SCC_UID = 1000650000;
  private static Path dir;
  private static Map<String, String> hostBefore;
  private static NodeCluster cluster;

  @BeforeAll
  static void up() throws Exception {
    dir = Files.createTempDirectory("pallas-cluster");
    // what outlives a run (packages, binaries) first: on a fresh machine the host read here must
    // already have them, as the host read after down will
    NodeCluster.prepare(dir);
    hostBefore = HostState.read();
    // NetworkPolicies enforced, as most clusters' network plugins do (tests 20-29)
    cluster = NodeCluster.up(dir, true);
    System.out.printf("node Ready: cluster.sh up took %.1f s%n", cluster.upSeconds());
  }

  @AfterAll
  static void down() throws Exception {
    if (cluster == null) {
      return;
    }
    cluster.down().ok();
    assertThat(HostState.read()).isEqualTo(hostBefore);
  }

  @Test
  @Order(1)
  void readmeInstallRunsTheQuickstartOnARealNode() throws Exception {
    List<String> commands = Readme.block("## Run it on a cluster");
    cluster.kubectl(
        "label", "namespace", "default", "pod-security.kubernetes.io/enforce=restricted");

    long start = System.nanoTime();
    // the chart's PostgreSQL as OpenShift would run it (the operator's turn comes in test 10)
    assertThat(cluster.installFromReadme(SYSTEM_UID)).contains("STATUS: deployed");
    double helmToOperatorReady = seconds(start);

    start = System.nanoTime();
    assertThat(cluster.sh(commands.get(1), LONG).ok())
        .contains("pallasdeployment.pallas.helu.ca/quickstart created");
    cluster.kubectl("wait", "pallas/quickstart", "--for=condition=Ready", "--timeout=300s");
    double applyToReady = seconds(start);
    System.out.printf(
        "helm install to operator ready %.1f s; kubectl apply to Ready=True %.1f s%n",
        helmToOperatorReady, applyToReady);

    // the operator's own MCP handshake with each agent, through its Service (docs/status.md,
    // "Verified"): the pod network and the cluster's DNS as the operator's pod sees them
    awaitVerified("default", "quickstart");
    assertThat(
            cluster.kubectl(
                "get", "pallas", "quickstart", "-o", "jsonpath={.status.agents[*].tools}"))
        .contains("send_message");

    // the quick start's values: the chart's PostgreSQL keeps the fleet's conversations
    assertThat(
            cluster.kubectl(
                "get",
                "pallas",
                "quickstart",
                "-o",
                "jsonpath={.status.conditions[?(@.type==\"ConversationsDurable\")].status}"))
        .isEqualTo("True");

    String registryUrl = "http://quickstart-registry.default.svc:24200/.well-known/mcp/server.json";
    assertThat(cluster.kubectl("get", "pallas"))
        .containsPattern("quickstart\\s+True\\s+2/2\\s+" + registryUrl.replace(".", "\\."));
    // three pods (two agents, the registry), running as the restricted namespace admitted them
    assertThat(
            cluster.kubectl(
                "get",
                "pods",
                "-o",
                "jsonpath={range .items[*]}{.status.phase} {.spec.securityContext.runAsNonRoot}"
                    + "{\"\\n\"}{end}"))
        .isEqualTo("Running true\n".repeat(3));

    // memory of each pod: its cgroup's working set (usage less inactive page cache), as the
    // kubelet computes it
    for (String pod :
        cluster
            .kubectl(
                "get",
                "pods",
                "-o",
                "jsonpath={range .items[*]}{.metadata.name} {.metadata.uid}{\"\\n\"}{end}")
            .lines()
            .toList()) {
      String[] nameAndUid = pod.split(" ");
      System.out.printf(
          "pod %s: working set %d MiB%n",
          nameAndUid[0], PodMemory.workingSetBytes(nameAndUid[1]) >> 20);
    }

    // README's port-forward and curl (the port-forward stopped afterwards)
    String forwardAndCurl = commands.get(2);
    String registry = cluster.sh(forwardAndCurl + "; status=$?; kill $!; exit $status", LONG).ok();
    // port-forward prints "Forwarding from ..." lines around curl's one line of JSON
    String json = registry.lines().filter(l -> l.startsWith("{")).findFirst().orElseThrow();
    JsonNode servers = new ObjectMapper().readTree(json).get("servers");
    assertThat(servers.findValuesAsText("url"))
        .containsExactlyInAnyOrder(
            "http://quickstart-helper.default.svc:24201/mcp",
            "http://quickstart-coordinator.default.svc:24202/mcp");

    // the coordinator through its Service address on the cluster's bridge, calling the helper
    // through the cluster's DNS and kube-proxy
    String clusterIp =
        cluster.kubectl(
            "get", "service", "quickstart-coordinator", "-o", "jsonpath={.spec.clusterIP}");
    McpSchema.CallToolResult result =
        relay("http://" + clusterIp + ":24202", "helper", "hello from the host");
    assertThat(result.isError()).isNotEqualTo(Boolean.TRUE);
    assertThat(((McpSchema.TextContent) result.content().get(0)).text())
        .contains("hello from the host");
  }

  /**
   * A client keeps calling an agent on the slow model through its Service, re-initialising its
   * session when the server says the session is gone (as Daedalus does), while a spec change rolls
   * that agent: every call is answered, none fails.
   */
  @Test
  @Order(2)
  void aRollingUpdateLosesNoCall() throws Exception {
    cluster.restrictedNamespace("rollout");
    Path manifest = dir.resolve("rollout.yaml");
    Files.writeString(manifest, rolloutManifest("You answer calls."));
    cluster.kubectl("apply", "--namespace", "rollout", "-f", manifest.toString());
    cluster.kubectl(
        "wait",
        "--namespace",
        "rollout",
        "pallas/rollout",
        "--for=condition=Ready",
        "--timeout=300s");
    String before = agentPod("rollout", "steady");
    String clusterIp =
        cluster.kubectl(
            "get",
            "service",
            "rollout-steady",
            "--namespace",
            "rollout",
            "-o",
            "jsonpath={.spec.clusterIP}");

    List<Caller> callers = List.of(new Caller("a", clusterIp), new Caller("b", clusterIp));
    callers.forEach(c -> Thread.ofPlatform().name("caller-" + c.name).start(c));
    try {
      await()
          .atMost(Duration.ofMinutes(1))
          .until(() -> callers.stream().allMatch(c -> c.answered.get() >= 1));
      long start = System.nanoTime();
      Files.writeString(manifest, rolloutManifest("You answer calls, after a rollout."));
      cluster.kubectl("apply", "--namespace", "rollout", "-f", manifest.toString());
      await()
          .atMost(Duration.ofMinutes(3))
          .until(() ->
              !agentPod("rollout", "steady").isEmpty()
                  && !agentPod("rollout", "steady").contains(before));
      cluster.kubectl(
          "rollout",
          "status",
          "deployment/rollout-steady",
          "--namespace",
          "rollout",
          "--timeout=300s");
      double rollout = seconds(start);
      // and calls keep being answered by the new pod
      Map<Caller, Integer> atRollout = new HashMap<>();
      callers.forEach(c -> atRollout.put(c, c.answered.get()));
      await()
          .atMost(Duration.ofMinutes(1))
          .until(() -> callers.stream().allMatch(c -> c.answered.get() >= atRollout.get(c) + 2));
      System.out.printf(
          "rollout of one agent in %.1f s; calls answered %d, failed %d, sessions re-initialised"
              + " %d, initialize refused %s%n",
          rollout,
          callers.stream().mapToInt(c -> c.answered.get()).sum(),
          callers.stream().mapToInt(c -> c.errors.size()).sum(),
          callers.stream().mapToInt(c -> c.reinitialised.get()).sum(),
          callers.stream()
              .flatMap(c -> c.initializeFailures.stream())
              .collect(Collectors.groupingBy(f -> f, TreeMap::new, Collectors.counting())));
    } finally {
      callers.forEach(Caller::stop);
    }
    for (Caller c : callers) {
      assertThat(c.errors).as("calls of caller " + c.name).isEmpty();
      assertThat(c.reinitialised.get())
          .as("the old pod's session is gone after the rollout")
          .isPositive();
    }
  }

  /**
   * The quick start's helper agent is killed twice (its JVM, SIGKILL): the kubelet restarts it at
   * once, then waits out its back-off. Meanwhile the coordinator, which calls the helper, says
   * {@code degraded} in get_health and the PallasDeployment is not Ready; then both recover.
   */
  @Test
  @Order(3)
  void aKilledAgentPodComesBackAndHealthSaysSoMeanwhile() throws Exception {
    String coordinatorIp =
        cluster.kubectl(
            "get", "service", "quickstart-coordinator", "-o", "jsonpath={.spec.clusterIP}");
    String helperIp =
        cluster.kubectl("get", "service", "quickstart-helper", "-o", "jsonpath={.spec.clusterIP}");
    String said = "kept through two kills " + UUID.randomUUID();
    try (McpSyncClient helper = mcpClient("http://" + helperIp + ":24201")) {
      helper.initialize();
      helper.callTool(new McpSchema.CallToolRequest("send_message", Map.of("message", said)));
    }
    try (McpSyncClient coordinator = mcpClient("http://" + coordinatorIp + ":24202")) {
      coordinator.initialize();
      assertThat(health(coordinator)).contains("\"status\":\"ok\"");
      // the first kill is restarted at once; the second waits out the kubelet's back-off (10 s),
      // during which the helper is down and both signals must say so
      String first = helperContainer();
      cluster.ctr("tasks", "kill", "--signal", "SIGKILL", first);
      await()
          .atMost(Duration.ofMinutes(1))
          .until(() -> !helperContainer().equals(first) && helperRestarts() >= 1);
      cluster.ctr("tasks", "kill", "--signal", "SIGKILL", helperContainer());
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () -> assertThat(health(coordinator)).contains("\"status\":\"degraded\"", "helper"));
      await().atMost(Duration.ofSeconds(30)).until(() -> readyStatus("quickstart").equals("False"));
      assertThat(helperRestarts()).as("still in its back-off").isEqualTo(1);
      // and back
      cluster.kubectl("wait", "pallas/quickstart", "--for=condition=Ready", "--timeout=180s");
      await()
          .atMost(Duration.ofMinutes(1))
          .untilAsserted(() -> assertThat(health(coordinator)).contains("\"status\":\"ok\""));
    }
    // the shared helper's conversation outlived its killed containers: it is in the chart's
    // PostgreSQL (README's quick start values), not in the memory of a process that is gone
    try (McpSyncClient helper = mcpClient("http://" + helperIp + ":24201")) {
      helper.initialize();
      assertThat(
              helper
                  .getPrompt(new McpSchema.GetPromptRequest("helper_history", Map.of()))
                  .messages()
                  .stream()
                  .map(m -> ((McpSchema.TextContent) m.content()).text())
                  .toList())
          .contains(said);
    }
  }

  /**
   * A client filling an agent pod's MCP port with idle connections, up to its cap and past it,
   * fails none of the kubelet's probes, which go to the pod's probe port (docs/runtime.md,
   * "Connections"): the pod stays ready, without a restart, for more than three liveness periods.
   * In the connections kept for health, get_health still answers while a call is refused.
   */
  /**
   * An agent pod's limits come from its memory limit (issue 16 §1; docs/runtime.md, "Memory"): a
   * body of 45 MiB, which ended such a pod when the limit was a fixed 80 MiB, is refused by name,
   * and bodies at the limit, four at once, are answered or refused for the bytes held while the pod
   * runs on without a restart in its real 512Mi cgroup.
   */
  @Test
  @Order(4)
  void bodiesAtTheLimitDoNotRestartAnAgentPod() throws Exception {
    String podIp = helperPodIp();
    RawMcp session = RawMcp.open("http://" + podIp + ":24201/mcp", null);
    String before = helperReadyAndRestarts();
    String refused;
    try (Socket socket = new Socket(podIp, 24201)) {
      socket.setSoTimeout(30_000);
      socket
          .getOutputStream()
          .write(
              RawMcp.postHead(
                      "Mcp-Session-Id: "
                          + session.session()
                          + "\r\nContent-Length: "
                          + (45 << 20)
                          + "\r\nConnection: close")
                  .getBytes(StandardCharsets.US_ASCII));
      refused = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }
    Matcher limit = Pattern.compile("at most ([0-9.]+) MiB").matcher(refused);
    assertThat(refused).startsWith("HTTP/1.1 413");
    assertThat(limit.find()).as(refused).isTrue();
    int largest = (int) (Double.parseDouble(limit.group(1)) * (1 << 20)) - 1024;
    System.out.printf("agent pod: bodies of at most %s MiB%n", limit.group(1));
    String padded = "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}";
    String body = padded + " ".repeat(largest - padded.length());
    List<CompletableFuture<Integer>> posts = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      posts.add(
          CompletableFuture.supplyAsync(() -> {
            try {
              return session.post(body).statusCode();
            } catch (Exception refusedWhileSending) {
              return 503; // answered and closed before the client sent its body
            }
          }));
    }
    List<Integer> statuses = new ArrayList<>();
    for (CompletableFuture<Integer> post : posts) {
      statuses.add(post.get(3, TimeUnit.MINUTES));
    }
    assertThat(statuses).contains(200).allMatch(s -> s == 200 || s == 503);
    assertThat(helperReadyAndRestarts()).isEqualTo(before);
  }

  @Test
  @Order(5)
  void aFloodOfConnectionsFailsNoProbe() throws Exception {
    String podIp = helperPodIp();
    String url = "http://" + podIp + ":24201/mcp";
    RawMcp session = RawMcp.open(url, null);
    String call =
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
            + "\"send_message\",\"arguments\":{\"message\":\"hi\"}}}";
    String before = helperReadyAndRestarts();
    assertThat(before).startsWith("true ");
    EdgeLimits limits = EdgeLimits.DEFAULT;
    int healthOnly = limits.maxConnections() - limits.connectionReserve();
    List<Socket> flood = new ArrayList<>();
    try {
      connect(flood, podIp, 24201, healthOnly + 1);
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> session.post(call).statusCode(), status -> status == 503);
      assertThat(RawMcp.text(session.callTool("get_health", Map.of())))
          .contains("\"status\":\"ok\"");

      // the rest up to the cap, and 10 more that wait in the kernel's backlog
      connect(flood, podIp, 24201, limits.maxConnections() - healthOnly - 1 + 10);
      try (Socket past = new Socket(podIp, 24201)) {
        past.setSoTimeout(2_000);
        past.getOutputStream()
            .write("GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        assertThatThrownBy(() -> past.getInputStream().read())
            .as("a connection past the cap waits unanswered")
            .isInstanceOf(SocketTimeoutException.class);
      }
      // readiness is probed every 2 s with one failure allowed, liveness every 10 s with three
      await()
          .during(Duration.ofSeconds(35))
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofSeconds(1))
          .until(RealClusterIT::helperReadyAndRestarts, before::equals);
    } finally {
      for (Socket socket : flood) {
        socket.close();
      }
    }
    // once the flood ends the agent serves calls again
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> session.post(call).statusCode(), status -> status == 200);
  }

  private static void connect(List<Socket> sockets, String host, int port, int count)
      throws IOException {
    for (int i = 0; i < count; i++) {
      sockets.add(new Socket(host, port));
    }
  }

  /** Deleting the PallasDeployment removes every object it owned (the real garbage collector). */
  @Test
  @Order(6)
  void deletingTheDeploymentRemovesEverythingItOwned() throws Exception {
    String owned =
        "deployments,replicasets,pods,services,configmaps,secrets,serviceaccounts,roles,rolebindings";
    assertThat(
            cluster.kubectl(
                "get", owned, "-l", "app.kubernetes.io/instance=quickstart", "-o", "name"))
        .contains("deployment.apps/quickstart-helper", "service/quickstart-registry");
    cluster.kubectl("delete", "pallas", "quickstart", "--wait=true", "--timeout=120s");
    await()
        .atMost(Duration.ofMinutes(3))
        .until(() ->
            cluster
                .kubectl("get", owned, "-l", "app.kubernetes.io/instance=quickstart", "-o", "name")
                .isBlank());
  }

  /**
   * An agent on an OpenAI-compatible provider (the fake LLM server on the bridge's address, where
   * pods reach the host) whose key comes from a Secret: the provider sees the key; rotating the
   * Secret rolls that agent and not the other, and the provider sees the new key afterwards.
   */
  @Test
  @Order(7)
  void aRotatedProviderKeyRollsExactlyTheAgentsThatUseIt() throws Exception {
    try (FakeLlmServer llm = FakeLlmServer.openAiOn(NodeCluster.NODE_IP, "fake-model")) {
      cluster.restrictedNamespace("provider");
      cluster.kubectl(
          "create",
          "secret",
          "generic",
          "llm",
          "--namespace",
          "provider",
          "--from-literal=openai=first-key");
      Path manifest = dir.resolve("provider.yaml");
      Files.writeString(
          manifest,
          """
          apiVersion: pallas.helu.ca/v1alpha1
          kind: PallasDeployment
          metadata:
            name: provider
          spec:
            registry:
              port: 24400
            providers:
              openai: {baseUrl: "%s", apiKey: {secretKeyRef: {name: llm, key: openai}}}
            agents:
              - name: writer
                model: openai.fake-model
              - name: echo
                model: passthrough
          """
              .formatted(llm.baseUrl()));
      cluster.kubectl("apply", "--namespace", "provider", "-f", manifest.toString());
      cluster.kubectl(
          "wait",
          "--namespace",
          "provider",
          "pallas/provider",
          "--for=condition=Ready",
          "--timeout=300s");
      String writerPod = agentPod("provider", "writer");
      String echoPod = agentPod("provider", "echo");
      String writerUrl =
          "http://"
              + cluster.kubectl(
                  "get",
                  "service",
                  "provider-writer",
                  "--namespace",
                  "provider",
                  "-o",
                  "jsonpath={.spec.clusterIP}")
              + ":24401";
      assertThat(answerOnce(writerUrl)).isEqualTo("default answer");
      assertThat(llm.chatRequests().getLast().header("Authorization"))
          .isEqualTo("Bearer first-key");

      cluster
          .sh(
              "kubectl create secret generic llm --namespace provider"
                  + " --from-literal=openai=second-key --dry-run=client -o yaml"
                  + " | kubectl apply -f -",
              LONG)
          .ok();
      // rolled: the old pod gone altogether (while it drains, a new connection may still reach
      // it until kube-proxy has caught up), one new pod in its place
      await()
          .atMost(Duration.ofMinutes(3))
          .until(() -> {
            String pods = agentPod("provider", "writer");
            return !pods.isBlank() && !pods.contains(" ") && !pods.equals(writerPod);
          });
      cluster.kubectl(
          "wait",
          "--namespace",
          "provider",
          "pallas/provider",
          "--for=condition=Ready",
          "--timeout=300s");
      llm.reset();
      assertThat(answerOnce(writerUrl)).isEqualTo("default answer");
      assertThat(llm.chatRequests().getLast().header("Authorization"))
          .isEqualTo("Bearer second-key");
      assertThat(agentPod("provider", "echo")).isEqualTo(echoPod);

      // the key is in the Secret only: not in the rendered ConfigMap, a status, an event or a log
      String everywhereElse =
          cluster.kubectl("get", "configmaps,pallas", "--namespace", "provider", "-o", "yaml")
              + cluster.kubectl("get", "events", "--all-namespaces", "-o", "yaml")
              + cluster.kubectl("logs", "--namespace", "provider", "deployment/provider-writer")
              + cluster.kubectl(
                  "logs", "--namespace", "pallas-system", "deployment/pallas-pallas-operator");
      assertThat(everywhereElse).doesNotContain("first-key", "second-key");
    }
  }

  /** A 10-agent deployment on the one node: applied to Ready=True, measured. */
  @Test
  @Order(8)
  void tenAgentsBecomeReady() throws Exception {
    cluster.restrictedNamespace("ten");
    StringBuilder agents = new StringBuilder();
    for (int i = 0; i < 10; i++) {
      agents.append("    - {name: a").append(i).append("}\n");
    }
    Path manifest = dir.resolve("ten.yaml");
    Files.writeString(
        manifest,
        """
        apiVersion: pallas.helu.ca/v1alpha1
        kind: PallasDeployment
        metadata:
          name: ten
        spec:
          registry:
            port: 24500
          defaultModel: passthrough
          agents:
        """
            + agents);
    long start = System.nanoTime();
    cluster.kubectl("apply", "--namespace", "ten", "-f", manifest.toString());
    cluster.kubectl(
        "wait", "--namespace", "ten", "pallas/ten", "--for=condition=Ready", "--timeout=600s");
    System.out.printf("10 agents: kubectl apply to Ready=True %.1f s%n", seconds(start));
    assertThat(cluster.kubectl("get", "pallas", "--namespace", "ten"))
        .containsPattern("ten\\s+True\\s+10/10");
    // their CPU requests (100m each) fill the node's two cores: gone before the next test
    cluster.kubectl("delete", "namespace", "ten", "--wait=true", "--timeout=180s");
  }

  /**
   * examples/placement.yaml on the real node (issue 21 §1; docs/operator.md, "Pods where you want
   * them"), the node tainted for agents only: the kubelet starts every pod with the fleet's
   * toleration, node selector, labels, Secret-fed environment and volume, the researcher's two
   * replicas beside each other (its anti-affinity is only preferred); a fleet whose pods select no
   * node stays unscheduled, as the scheduler says.
   */
  @Test
  @Order(9)
  void thePlacementExampleRunsWhereItSays() throws Exception {
    String node = cluster.kubectl("get", "nodes", "-o", "jsonpath={.items[0].metadata.name}");
    cluster.restrictedNamespace("placed");
    cluster.kubectl(
        "create",
        "secret",
        "generic",
        "vendor",
        "--namespace",
        "placed",
        "--from-literal=token=vendor-token-1");
    cluster.kubectl("taint", "node", node, "dedicated=agents:NoSchedule");
    try {
      cluster.kubectl(
          "apply",
          "--namespace",
          "placed",
          "-f",
          NodeCluster.ROOT.resolve("examples/placement.yaml").toString());
      try {
        cluster.kubectl(
            "wait",
            "--namespace",
            "placed",
            "pallas/placement",
            "--for=condition=Ready",
            "--timeout=300s");
      } catch (AssertionError notReady) {
        throw new AssertionError(
            cluster.kubectl("get", "pods", "--all-namespaces", "-o", "wide")
                + cluster.kubectl("get", "events", "--namespace", "placed"),
            notReady);
      }
      String pods =
          cluster.kubectl(
              "get",
              "pods",
              "--namespace",
              "placed",
              "-l",
              "team=search,app.kubernetes.io/component=agent",
              "-o",
              "jsonpath={range .items[*]}{.metadata.labels.pallas\\.helu\\.ca/agent}"
                  + " {.metadata.labels.tier} {.status.phase} {.spec.nodeName}"
                  + " {.spec.containers[0].env[?(@.name==\"VENDOR_TOKEN\")].valueFrom.secretKeyRef.name}"
                  + " {.spec.containers[0].volumeMounts[?(@.name==\"cache\")].mountPath}{\"\\n\"}{end}");
      assertThat(pods.lines().sorted().toList())
          .containsExactly(
              "helper  Running " + node + " vendor /var/cache/search",
              "researcher research Running " + node + " vendor /var/cache/search",
              "researcher research Running " + node + " vendor /var/cache/search");
      assertThat(
              cluster.kubectl(
                  "get",
                  "pods",
                  "--namespace",
                  "placed",
                  "-l",
                  "app.kubernetes.io/component=registry",
                  "-o",
                  "jsonpath={.items[*].status.phase}"))
          .as("the registry takes the fleet's toleration too")
          .isEqualTo("Running");

      Path nowhere = dir.resolve("nowhere.yaml");
      Files.writeString(
          nowhere,
          """
          apiVersion: pallas.helu.ca/v1alpha1
          kind: PallasDeployment
          metadata:
            name: nowhere
          spec:
            defaultModel: passthrough
            registry: {port: 24600}
            pod:
              tolerations: [{key: dedicated, operator: Equal, value: agents, effect: NoSchedule}]
            agents:
              - name: lost
                pod: {nodeSelector: {pool: none-of-these}}
          """);
      cluster.kubectl("apply", "--namespace", "placed", "-f", nowhere.toString());
      await()
          .atMost(Duration.ofMinutes(1))
          .pollInterval(Duration.ofSeconds(1))
          .until(
              () ->
                  cluster.kubectl(
                      "get",
                      "pods",
                      "--namespace",
                      "placed",
                      "-l",
                      "pallas.helu.ca/agent=lost",
                      "-o",
                      "jsonpath={.items[*].status.conditions[?(@.type==\"PodScheduled\")].reason}"),
              "Unschedulable"::equals);
    } finally {
      cluster.kubectl("taint", "node", node, "dedicated=agents:NoSchedule-");
    }
    // the node's CPU requests back for the tests after this one
    cluster.kubectl("delete", "namespace", "placed", "--wait=true", "--timeout=180s");
  }

  /**
   * The operator as OpenShift's restricted-v2 SCC runs it (docs/install.md, "OpenShift"): the chart
   * fixes no UID, so the platform's applies (here given as a value, as nothing assigns one on this
   * node); the operator runs as that UID in group 0, which its image does not know, and goes on
   * reconciling (test 11). The chart's PostgreSQL runs so since the install (test 1), its volume
   * initialised by that UID, and keeps the fleet's conversations (test 3).
   */
  @Test
  @Order(10)
  void theOperatorAndThePostgresqlRunAsTheUidOfTheirNamespace() throws Exception {
    cluster
        .sh(
            "helm upgrade pallas helm/pallas-operator --namespace pallas-system --reuse-values"
                + " --set podSecurityContext.runAsUser=%d,podSecurityContext.fsGroup=%d"
                    .formatted(SYSTEM_UID, SYSTEM_UID),
            LONG)
        .ok();
    cluster.awaitRollout("deployment/pallas-pallas-operator");
    await()
        .atMost(Duration.ofMinutes(1))
        .untilAsserted(() ->
            assertRunsAs(
                processIds("pallas-system", "app.kubernetes.io/name=pallas-operator", "java"),
                SYSTEM_UID));
    assertRunsAs(
        processIds("pallas-system", "app.kubernetes.io/name=postgresql", "postgres"), SYSTEM_UID);
  }

  /**
   * A fleet whose pods get a UID from their namespace's range, as OpenShift's restricted-v2 SCC
   * gives them (spec.pod.securityContext, docs/operator.md): the operator running under its own
   * arbitrary UID (test 10) reconciles it, every agent and the registry run as that UID in group 0
   * under Pod Security "restricted", the operator's MCP handshake verifies them, an agent calls the
   * other, and the registry lists both.
   */
  @Test
  @Order(11)
  void aFleetRunsAsTheUidOfItsNamespace() throws Exception {
    cluster.restrictedNamespace("scc");
    Path manifest = dir.resolve("scc.yaml");
    Files.writeString(
        manifest,
        """
        apiVersion: pallas.helu.ca/v1alpha1
        kind: PallasDeployment
        metadata:
          name: scc
        spec:
          registry:
            port: 24600
          defaultModel: passthrough
          pod:
            securityContext: {runAsUser: %d, fsGroup: %d}
          agents:
            - {name: front, servers: [back]}
            - {name: back}
        """
            .formatted(SCC_UID, SCC_UID));
    cluster.kubectl("apply", "--namespace", "scc", "-f", manifest.toString());
    cluster.kubectl(
        "wait", "--namespace", "scc", "pallas/scc", "--for=condition=Ready", "--timeout=300s");
    for (String pod :
        List.of(
            "pallas.helu.ca/agent=front",
            "pallas.helu.ca/agent=back",
            "app.kubernetes.io/component=registry")) {
      assertRunsAs(processIds("scc", pod, "java"), SCC_UID);
    }
    await()
        .atMost(Duration.ofMinutes(2))
        .until(() -> condition("scc", "scc", "Verified"), "True"::equals);
    String front = serviceIp("scc", "scc-front");
    try (McpSyncClient client = mcpClient("http://" + front + ":24601")) {
      client.initialize();
      McpSchema.CallToolResult result =
          client.callTool(
              new McpSchema.CallToolRequest(
                  "send_message",
                  Map.of("message", "***CALL_TOOL back__back {\"message\": \"as any UID\"}")));
      assertThat(((McpSchema.TextContent) result.content().get(0)).text()).contains("as any UID");
    }
    String registry =
        cluster
            .sh(
                "curl -sf http://"
                    + serviceIp("scc", "scc-registry")
                    + ":24600/.well-known/mcp/server.json",
                LONG)
            .ok();
    assertThat(new ObjectMapper().readTree(registry).get("servers").findValuesAsText("url"))
        .containsExactlyInAnyOrder(
            "http://scc-front.scc.svc:24601/mcp", "http://scc-back.scc.svc:24602/mcp");
  }

  /**
   * The fleet's NetworkPolicy enforced (kube-router's firewall on this node; docs/operator.md,
   * "Network"): from pods that are not the fleet's, an agent's MCP port answers only those of the
   * fleet's namespace, then also those spec.networkPolicy.from names; Prometheus's pods reach
   * /metrics from any namespace; the probe ports stay open and no pod misses a probe. Turning the
   * policy off lets the stranger in: the network carried its traffic, the policy refused it.
   */
  @Test
  @Order(20)
  void theFleetsNetworkPolicyIsEnforced() throws Exception {
    cluster.load(
        List.of(ToolImages.build(cluster, dir.resolve("images")).get("pallas-daedalus").tarball()));
    cluster.restrictedNamespace("outside");
    cluster.restrictedNamespace("callers");
    Prober neighbour = new Prober("scc", "neighbour", Map.of());
    Prober stranger = new Prober("outside", "stranger", Map.of());
    Prober prometheus =
        new Prober("outside", "prometheus", Map.of("app.kubernetes.io/name", "prometheus"));
    Prober daedalus = new Prober("callers", "daedalus", Map.of("role", "daedalus"));
    Prober other = new Prober("callers", "other", Map.of());
    for (Prober prober : List.of(neighbour, stranger, prometheus, daedalus, other)) {
      prober.start();
    }
    for (Prober prober : List.of(neighbour, stranger, prometheus, daedalus, other)) {
      prober.awaitRunning();
    }
    String mcp = "http://scc-front.scc.svc:24601/mcp";
    String metrics = "http://scc-front.scc.svc:24601/metrics";
    String registryMetrics = "http://scc-registry.scc.svc:24600/metrics";
    String probes =
        "http://"
            + podIp("scc", "pallas.helu.ca/agent=front")
            + ":"
            + PallasNames.probePort(24601)
            + "/readyz";
    String restartsBefore = restarts("scc");

    // the default: the fleet's namespace, the operator, Prometheus (new pods are admitted once
    // kube-router has their addresses in its sets)
    neighbour.awaitAnswer(mcp);
    prometheus.awaitAnswer(metrics);
    assertThat(prometheus.get(metrics)).isEqualTo("200");
    assertThat(prometheus.get(registryMetrics)).isEqualTo("200");
    assertThat(stranger.get(mcp)).as("a pod of another namespace").startsWith("unreachable");
    assertThat(stranger.get(metrics)).startsWith("unreachable");
    assertThat(daedalus.get(mcp)).as("not named yet").startsWith("unreachable");
    assertThat(stranger.get(probes)).as("probe ports are open to all").isEqualTo("200");

    // one pod of another namespace named in from (and the fleet's namespace kept)
    patchScc("{\"from\":[{},{\"namespace\":\"callers\",\"podLabels\":{\"role\":\"daedalus\"}}]}");
    daedalus.awaitAnswer(mcp);
    assertThat(other.get(mcp)).as("its neighbour without the label").startsWith("unreachable");
    assertThat(neighbour.get(mcp)).matches("\\d{3}");
    assertThat(stranger.get(mcp)).startsWith("unreachable");

    // without the policy the stranger gets through: what refused it was the policy
    patchScc("{\"enabled\":false}");
    stranger.awaitAnswer(mcp);

    // every pod of the fleet stayed ready, without a restart, and verified by the operator
    assertThat(restarts("scc")).isEqualTo(restartsBefore);
    assertThat(
            cluster.kubectl(
                "get",
                "pods",
                "--namespace",
                "scc",
                "-l",
                "app.kubernetes.io/instance=scc",
                "-o",
                "jsonpath={.items[*].status.containerStatuses[0].ready}"))
        .isEqualTo("true true true");
    assertThat(condition("scc", "scc", "Verified")).isEqualTo("True");
  }

  /** A merge patch of the fleet scc's spec.networkPolicy. */
  private static void patchScc(String networkPolicy) throws Exception {
    cluster.kubectl(
        "patch",
        "pallas",
        "scc",
        "--namespace",
        "scc",
        "--type",
        "merge",
        "-p",
        "{\"spec\":{\"networkPolicy\":" + networkPolicy + "}}");
  }

  /**
   * A pod of the Python image (pallas-daedalus:test) that sleeps, in which {@link #get} runs one
   * HTTP GET with kubectl exec: a client somewhere on the pod network.
   */
  private record Prober(String namespace, String name, Map<String, String> labels) {
    void start() throws Exception {
      Path manifest = dir.resolve("prober-" + namespace + "-" + name + ".yaml");
      Files.writeString(
          manifest,
          """
          apiVersion: v1
          kind: Pod
          metadata:
            name: %s
            namespace: %s
            labels: %s
          spec:
            terminationGracePeriodSeconds: 0
            securityContext:
              runAsNonRoot: true
              seccompProfile: {type: RuntimeDefault}
            containers:
              - name: prober
                image: pallas-daedalus:test
                imagePullPolicy: Never
                command: [/usr/local/python/bin/python3, -c, "import time; time.sleep(86400)"]
                securityContext:
                  allowPrivilegeEscalation: false
                  readOnlyRootFilesystem: true
                  capabilities: {drop: [ALL]}
          """
              .formatted(name, namespace, new ObjectMapper().writeValueAsString(labels)));
      cluster.kubectl("apply", "-f", manifest.toString());
    }

    void awaitRunning() throws Exception {
      cluster.kubectl(
          "wait",
          "--namespace",
          namespace,
          "pod/" + name,
          "--for=condition=Ready",
          "--timeout=120s");
    }

    /** Waits until a GET of url is answered (any HTTP status). */
    void awaitAnswer(String url) {
      await()
          .atMost(Duration.ofMinutes(1))
          .pollInterval(Duration.ofSeconds(1))
          .until(() -> get(url), status -> status.matches("\\d{3}"));
    }

    /** The HTTP status of a GET of url, or "unreachable ..." when no connection was made. */
    String get(String url) throws Exception {
      return cluster
          .kubectl(
              "exec",
              "--namespace",
              namespace,
              name,
              "--",
              "/usr/local/python/bin/python3",
              "-c",
              """
              import sys, urllib.error, urllib.request
              try:
                  print(urllib.request.urlopen(sys.argv[1], timeout=3).status)
              except urllib.error.HTTPError as e:
                  print(e.code)
              except Exception as e:
                  print("unreachable:", e)
              """,
              url)
          .strip();
    }
  }

  /** The UID, primary GID and supplementary groups of a process of a pod. */
  private record Ids(long uid, long gid, List<Long> groups) {}

  /** As restricted-v2 runs a pod: the UID, group 0, the UID as fsGroup among the groups. */
  private static void assertRunsAs(Ids ids, long uid) {
    assertThat(ids.uid()).isEqualTo(uid);
    assertThat(ids.gid()).isZero();
    assertThat(ids.groups()).contains(uid);
  }

  /**
   * The user and groups the node's kernel runs the process named {@code comm} of the one pod {@code
   * selector} selects (found through the pod's cgroup), as /proc says.
   */
  private static Ids processIds(String namespace, String selector, String comm) throws Exception {
    String[] pods =
        cluster
            .kubectl(
                "get",
                "pods",
                "--namespace",
                namespace,
                "-l",
                selector,
                "-o",
                "jsonpath={.items[*].metadata.uid}")
            .split(" ");
    assertThat(pods).as("the pods of " + selector).hasSize(1);
    Path cgroup = PodMemory.cgroupOf(pods[0]);
    try (var procs = Files.find(cgroup, 2, (p, a) -> p.endsWith("cgroup.procs"))) {
      for (Path list : procs.toList()) {
        for (String pid : Files.readAllLines(list)) {
          Path proc = Path.of("/proc", pid);
          if (Files.readString(proc.resolve("comm")).strip().equals(comm)) {
            Map<String, String> status = new HashMap<>();
            for (String line : Files.readAllLines(proc.resolve("status"))) {
              String[] kv = line.split(":\\s*", 2);
              status.put(kv[0], kv.length > 1 ? kv[1] : "");
            }
            return new Ids(
                Long.parseLong(status.get("Uid").split("\\s+")[0]),
                Long.parseLong(status.get("Gid").split("\\s+")[0]),
                Stream.of(status.get("Groups").strip().split("\\s+"))
                    .filter(g -> !g.isEmpty())
                    .map(Long::parseLong)
                    .toList());
          }
        }
      }
    }
    throw new AssertionError("no process " + comm + " in the pod of " + selector);
  }

  private static String serviceIp(String namespace, String service) throws Exception {
    return cluster.kubectl(
        "get", "service", service, "--namespace", namespace, "-o", "jsonpath={.spec.clusterIP}");
  }

  private static String podIp(String namespace, String selector) throws Exception {
    return cluster.kubectl(
        "get",
        "pods",
        "--namespace",
        namespace,
        "-l",
        selector,
        "-o",
        "jsonpath={.items[0].status.podIP}");
  }

  /** Every container's restart count in a namespace. */
  private static String restarts(String namespace) throws Exception {
    return cluster.kubectl(
        "get",
        "pods",
        "--namespace",
        namespace,
        "-o",
        "jsonpath={range .items[*]}{.metadata.name} {.status.containerStatuses[0].restartCount}"
            + "{\"\\n\"}{end}");
  }

  /**
   * What twelve agents cost (issue 21 §4): a pod each, then one pod group, on the passthrough
   * model, each fleet alone on the node. Printed: apply to Ready, the cgroup working set of the
   * agent pods once every agent answered the operator's handshake and five calls, and each pod's
   * own start to ready (its log's "ready N ms after the JVM started"). docs/benchmarks.md, "Real
   * cluster", has the figures.
   */
  @Test
  @Order(40)
  void twelveAgentsInPodsOfTheirOwn() throws Exception {
    // the fleets of the tests before hold most of the node's 2 cores in CPU requests
    cluster.kubectl(
        "delete",
        "namespace",
        "ten",
        "rollout",
        "provider",
        "scc",
        "outside",
        "callers",
        "--ignore-not-found",
        "--wait=true",
        "--timeout=300s");
    FleetCost solo = twelveAgents("solo", false);
    System.out.printf(
        "12 agents, a pod each: kubectl apply to Ready=True %.1f s; working set per pod median %d"
            + " MiB (%d to %d), %d MiB in all; start to ready per pod median %d ms (%s)%n",
        solo.applyToReady(),
        median(solo.workingSets()),
        solo.workingSets().stream().mapToLong(Long::longValue).min().orElseThrow(),
        solo.workingSets().stream().mapToLong(Long::longValue).max().orElseThrow(),
        solo.workingSets().stream().mapToLong(Long::longValue).sum(),
        median(solo.readyMillis()),
        solo.readyMillis());
    assertThat(solo.workingSets()).hasSize(12);
  }

  @Test
  @Order(41)
  void twelveAgentsInOnePodGroup() throws Exception {
    FleetCost grouped = twelveAgents("grouped", true);
    long pod = grouped.workingSets().get(0);
    System.out.printf(
        "12 agents in one pod group: kubectl apply to Ready=True %.1f s; working set of the pod %d"
            + " MiB, %.1f MiB per agent; start to ready %d ms%n",
        grouped.applyToReady(), pod, pod / 12.0, grouped.readyMillis().get(0));
    assertThat(grouped.workingSets()).as("one pod serves the twelve").hasSize(1);
  }

  /**
   * docs/install.md's "A fleet in less memory", verbatim: examples/pod-groups.yaml on the node, two
   * Deployments for six agents, and an agent of one group calling an agent of the other through its
   * Service.
   */
  @Test
  @Order(42)
  void theDocumentedPodGroupsExampleRuns() throws Exception {
    List<String> commands =
        Readme.block(Path.of("..", "docs", "install.md"), "### A fleet in less memory");
    assertThat(cluster.sh(commands.get(0), LONG).ok())
        .contains("pallasdeployment.pallas.helu.ca/crew created");
    cluster.kubectl("wait", "pallas/crew", "--for=condition=Ready", "--timeout=300s");
    assertThat(
            cluster.kubectl(
                "get",
                "deployments",
                "-l",
                "app.kubernetes.io/instance=crew,app.kubernetes.io/component=agent",
                "-o",
                "jsonpath={.items[*].metadata.name}"))
        .isEqualTo("crew-desk crew-research");
    String triage =
        cluster.kubectl("get", "service", "crew-triage", "-o", "jsonpath={.spec.clusterIP}");
    String port =
        cluster.kubectl("get", "service", "crew-triage", "-o", "jsonpath={.spec.ports[0].port}");
    McpSchema.CallToolResult result =
        relay("http://" + triage + ":" + port, "researcher", "across pods");
    assertThat(((McpSchema.TextContent) result.content().get(0)).text()).contains("across pods");
    cluster.kubectl("delete", "pallas", "crew", "--wait=true", "--timeout=120s");
  }

  /**
   * One send_message on a new session of the agent at {@code url} whose passthrough model calls
   * agent {@code peer} with {@code message} (an agent-to-agent call), once the Service answers:
   * Ready says the pods are ready, and kube-proxy programs the Service's endpoints a moment later
   * (until then it rejects connections to it; a CI run met that).
   */
  private static McpSchema.CallToolResult relay(String url, String peer, String message) {
    return firstAnswer(() -> relayOnce(url, peer, message));
  }

  private static McpSchema.CallToolResult relayOnce(String url, String peer, String message) {
    try (McpSyncClient client = mcpClient(url)) {
      client.initialize();
      return client.callTool(
          new McpSchema.CallToolRequest(
              "send_message",
              Map.of(
                  "message",
                  "***CALL_TOOL " + peer + "__" + peer + " {\"message\": \"" + message + "\"}")));
    }
  }

  /** Twelve agents' pods measured (FleetCost), in MiB and milliseconds. */
  private record FleetCost(double applyToReady, List<Long> workingSets, List<Long> readyMillis) {}

  /**
   * Applies a fleet of twelve passthrough agents (in one pod group with {@code grouped}) in a
   * namespace of its own, measures it, calls one agent through its Service, and deletes it.
   */
  private static FleetCost twelveAgents(String name, boolean grouped) throws Exception {
    cluster.restrictedNamespace(name);
    StringBuilder agents = new StringBuilder();
    for (int i = 0; i < 12; i++) {
      agents.append("    - {name: a").append(i).append("}\n");
    }
    Path manifest = dir.resolve(name + ".yaml");
    Files.writeString(
        manifest,
        """
        apiVersion: pallas.helu.ca/v1alpha1
        kind: PallasDeployment
        metadata:
          name: %s
        spec:
          registry:
            port: 24600
          defaultModel: passthrough
        %s  agents:
        """
                .formatted(
                    name, grouped ? "  podGroups: [{name: all}]\n  defaultPodGroup: all\n" : "")
            + agents);
    long start = System.nanoTime();
    cluster.kubectl("apply", "--namespace", name, "-f", manifest.toString());
    cluster.kubectl(
        "wait", "--namespace", name, "pallas/" + name, "--for=condition=Ready", "--timeout=600s");
    double applyToReady = seconds(start);
    assertThat(cluster.kubectl("get", "pallas", "--namespace", name))
        .containsPattern(name + "\\s+True\\s+12/12");
    // every agent answered the operator's initialize and tools/list through its own Service
    awaitVerified(name, name);
    // five calls to the last agent, through its Service: it answers, and its port's metrics are
    // its own
    String ip =
        cluster.kubectl(
            "get",
            "service",
            name + "-a11",
            "--namespace",
            name,
            "-o",
            "jsonpath={.spec.clusterIP}");
    try (McpSyncClient client = mcpClient("http://" + ip + ":24612")) {
      client.initialize();
      for (int i = 0; i < 5; i++) {
        McpSchema.CallToolResult result =
            client.callTool(
                new McpSchema.CallToolRequest("send_message", Map.of("message", "call " + i)));
        assertThat(((McpSchema.TextContent) result.content().get(0)).text()).isEqualTo("call " + i);
      }
    }
    String metrics = cluster.sh("curl -s http://" + ip + ":24612/metrics", LONG).ok();
    assertThat(metrics).contains("pallas_send_message_total{agent=\"a11\",outcome=\"ok\"} 5.0");
    assertThat(metrics).doesNotContain("agent=\"a10\"");

    List<String[]> pods =
        cluster
            .kubectl(
                "get",
                "pods",
                "--namespace",
                name,
                "-l",
                "app.kubernetes.io/component=agent",
                "-o",
                "jsonpath={range .items[*]}{.metadata.name} {.metadata.uid}{\"\\n\"}{end}")
            .lines()
            .map(l -> l.split(" "))
            .toList();
    List<Long> workingSets =
        PodMemory.settledWorkingSetsMiB(pods.stream().map(pod -> pod[1]).toList());
    List<Long> readyMillis = new ArrayList<>();
    Pattern ready = Pattern.compile("ready (\\d+) ms after the JVM started");
    for (String[] pod : pods) {
      Matcher m = ready.matcher(cluster.kubectl("logs", "--namespace", name, pod[0]));
      assertThat(m.find()).as("%s logs its start to ready", pod[0]).isTrue();
      readyMillis.add(Long.parseLong(m.group(1)));
    }
    cluster.kubectl("delete", "namespace", name, "--wait=true", "--timeout=300s");
    return new FleetCost(applyToReady, workingSets, readyMillis);
  }

  /** Until every agent of a fleet answered the operator's MCP handshake (docs/status.md). */
  private static void awaitVerified(String namespace, String pallas) {
    await()
        .atMost(Duration.ofMinutes(3))
        .pollInterval(Duration.ofSeconds(1))
        .until(
            () ->
                cluster.kubectl(
                    "get",
                    "pallas",
                    pallas,
                    "--namespace",
                    namespace,
                    "-o",
                    "jsonpath={.status.conditions[?(@.type==\"Verified\")].status}"),
            "True"::equals);
  }

  private static long median(List<Long> values) {
    List<Long> sorted = values.stream().sorted().toList();
    return sorted.get(sorted.size() / 2);
  }

  /** The names of an agent's pods (one replica here), terminating ones included. */
  private static String agentPod(String namespace, String agent) throws Exception {
    return cluster.kubectl(
        "get",
        "pods",
        "--namespace",
        namespace,
        "-l",
        "pallas.helu.ca/agent=" + agent,
        "-o",
        "jsonpath={.items[*].metadata.name}");
  }

  /**
   * The answer to one send_message on a new session, once it comes: a connection or an initialize
   * can fail while kube-proxy still routes the Service to a pod that a rollout just removed, or
   * while that pod hands its sessions over (the SDK fails an initialize that races with that), so
   * each attempt starts a new session and a failed one is tried again half a second later.
   */
  private static String answerOnce(String url) {
    return firstAnswer(() -> writeOnce(url));
  }

  /** What {@code attempt} returns the first time it does not throw, tried every half second. */
  private static <T> T firstAnswer(Callable<T> attempt) {
    AtomicReference<T> answer = new AtomicReference<>();
    await()
        .atMost(Duration.ofMinutes(1))
        .pollInterval(Duration.ofMillis(500))
        .ignoreExceptions()
        .until(() -> {
          answer.set(attempt.call());
          return true;
        });
    return answer.get();
  }

  /** One send_message on a new session. */
  private static String writeOnce(String url) {
    McpSyncClient client = mcpClient(url);
    try {
      client.initialize();
      McpSchema.CallToolResult result =
          client.callTool(new McpSchema.CallToolRequest("send_message", Map.of("message", "hi")));
      return ((McpSchema.TextContent) result.content().get(0)).text();
    } finally {
      Caller.close(client);
    }
  }

  private static String helperContainer() throws Exception {
    String id = helperContainerStatus("containerID");
    return id.substring(id.indexOf("://") + 3);
  }

  private static int helperRestarts() throws Exception {
    return Integer.parseInt(helperContainerStatus("restartCount"));
  }

  private static String helperContainerStatus(String field) throws Exception {
    return helperPod("status.containerStatuses[0]." + field);
  }

  private static String helperPodIp() throws Exception {
    return helperPod("status.podIP");
  }

  /** A field of the helper's pod, by its path under the pod. */
  private static String helperPod(String path) throws Exception {
    return cluster.kubectl(
        "get",
        "pods",
        "-l",
        "pallas.helu.ca/agent=helper",
        "-o",
        "jsonpath={.items[0]." + path + "}");
  }

  /** "true 2": the helper container is ready and was restarted twice. */
  private static String helperReadyAndRestarts() throws Exception {
    return helperContainerStatus("ready") + " " + helperRestarts();
  }

  private static String readyStatus(String pallas) throws Exception {
    return condition("default", pallas, "Ready");
  }

  /** The status of a PallasDeployment's condition of that type. */
  private static String condition(String namespace, String pallas, String type) throws Exception {
    return cluster.kubectl(
        "get",
        "pallas",
        pallas,
        "--namespace",
        namespace,
        "-o",
        "jsonpath={.status.conditions[?(@.type==\"" + type + "\")].status}");
  }

  private static String health(McpSyncClient client) {
    McpSchema.CallToolResult result =
        client.callTool(new McpSchema.CallToolRequest("get_health", Map.of()));
    return ((McpSchema.TextContent) result.content().get(0)).text();
  }

  private static McpSyncClient mcpClient(String url) {
    return McpClient.sync(HttpClientStreamableHttpTransport.builder(url).endpoint("/mcp").build())
        .requestTimeout(Duration.ofSeconds(60))
        .build();
  }

  private static String rolloutManifest(String instruction) {
    return """
    apiVersion: pallas.helu.ca/v1alpha1
    kind: PallasDeployment
    metadata:
      name: rollout
    spec:
      registry:
        port: 24300
      agents:
        - name: steady
          model: slow
          instruction: "%s"
    """
        .formatted(instruction);
  }

  /** Calls send_message one after another until stopped; counts answers and failures. */
  private static final class Caller implements Runnable {
    final String name;
    final String url;
    final AtomicInteger answered = new AtomicInteger();
    final AtomicInteger reinitialised = new AtomicInteger();
    final List<String> errors = new CopyOnWriteArrayList<>();
    final List<String> initializeFailures = new CopyOnWriteArrayList<>();
    private volatile boolean stopped;

    Caller(String name, String clusterIp) {
      this.name = name;
      this.url = "http://" + clusterIp + ":24301";
    }

    @Override
    public void run() {
      McpSyncClient client = null;
      int n = 0;
      while (!stopped) {
        if (client == null) {
          try {
            client = open();
          } catch (RuntimeException e) {
            // no call was sent: a client starts its session again, as after "session gone"
            initializeFailures.add(Causes.root(e).toString());
            continue;
          }
        }
        String message = name + "-" + n;
        try {
          McpSchema.CallToolResult result =
              client.callTool(
                  new McpSchema.CallToolRequest("send_message", Map.of("message", message)));
          String text = ((McpSchema.TextContent) result.content().get(0)).text();
          if (Boolean.TRUE.equals(result.isError()) || !text.equals(message)) {
            errors.add(message + ": " + text);
          } else {
            answered.incrementAndGet();
          }
          n++;
        } catch (RuntimeException e) {
          if (sessionGone(e)) {
            // the server said the session is gone (404): a new session, then the same call again
            reinitialised.incrementAndGet();
          } else {
            errors.add(message + ": " + e);
            n++;
          }
          close(client);
          client = null;
        }
      }
      close(client);
    }

    /**
     * The Java SDK's ways of saying the server answered 404 ("session gone"): the transport's
     * exception, or, for a request waiting on that session, "MCP session with server terminated".
     */
    private static boolean sessionGone(RuntimeException e) {
      return Causes.any(e, McpTransportSessionNotFoundException.class)
          || "MCP session with server terminated".equals(e.getMessage());
    }

    private McpSyncClient open() {
      McpSyncClient client = mcpClient(url);
      try {
        client.initialize();
        return client;
      } catch (RuntimeException e) {
        close(client);
        throw e;
      }
    }

    private static void close(McpSyncClient client) {
      try {
        if (client != null) {
          client.close();
        }
      } catch (RuntimeException e) {
        // the SDK fails to close a client whose initialize failed; nothing is open then
      }
    }

    void stop() {
      stopped = true;
    }
  }

  private static double seconds(long start) {
    return (System.nanoTime() - start) / 1e9;
  }

  /**
   * What the cluster may change on the host and `down` must restore: interfaces, routes, the
   * netfilter ruleset, the sysctls the kubelet and kube-proxy set, mounts, network namespaces, the
   * kubelet's cgroups and the host directories containerd and CNI create (e2e/cluster/README.md). A
   * tool the host lacks is recorded as "absent"; a command that fails fails the test, so an error
   * message is never taken for state.
   */
  private static final class HostState {
    private static final List<String> SYSCTLS =
        List.of(
            "net/ipv4/ip_forward",
            "net/bridge/bridge-nf-call-iptables",
            "net/ipv4/conf/all/route_localnet",
            "vm/overcommit_memory",
            "kernel/panic",
            "kernel/panic_on_oops",
            "kernel/keys/root_maxkeys",
            "kernel/keys/root_maxbytes");
    // cluster.sh's HOST_DIRS
    private static final List<String> DIRS =
        List.of(
            "/run/containerd",
            "/var/lib/cni",
            "/var/lib/kubelet",
            "/opt/containerd",
            "/var/run/netns",
            "/etc/cni");

    static Map<String, String> read() throws Exception {
      Map<String, String> state = new TreeMap<>();
      state.put("links", out("ip -o link show | cut -d: -f2"));
      state.put("routes", out("ip route show; ip -6 route show"));
      state.put("nft", ruleset("nft", "list", "ruleset"));
      state.put("iptables", ruleset("iptables-save"));
      state.put("ip6tables", ruleset("ip6tables-save"));
      // kube-router's IP sets
      state.put("ipsets", ruleset("ipset", "save"));
      state.put("mounts", out("findmnt -rn -o TARGET | sort"));
      state.put("netns", list(Path.of("/var/run/netns")));
      // cgroup v1 has a kubepods per controller, v2 one in the unified hierarchy
      state.put(
          "cgroups",
          Stream.concat(
                  Stream.of(list(Path.of("/sys/fs/cgroup")).split("\n")).map(c -> c + "/kubepods"),
                  Stream.of("kubepods"))
              .filter(c -> Files.isDirectory(Path.of("/sys/fs/cgroup", c)))
              .sorted()
              .collect(Collectors.joining(" ")));
      for (String sysctl : SYSCTLS) {
        Path file = Path.of("/proc/sys", sysctl);
        state.put(sysctl, Files.exists(file) ? Files.readString(file).strip() : "absent");
      }
      for (String dir : DIRS) {
        state.put(dir, Files.exists(Path.of(dir)) ? "present" : "absent");
      }
      return state;
    }

    /**
     * A netfilter ruleset as this tool prints it, without comments or counters (iptables-nft gives
     * every rule a counter, which traffic changes, not the cluster); "absent" without it.
     */
    private static String ruleset(String tool, String... args) throws Exception {
      if (Stream.of(System.getenv("PATH").split(":"))
          .noneMatch(d -> Files.isExecutable(Path.of(d, tool)))) {
        return "absent";
      }
      return out(tool + " " + String.join(" ", args))
          .lines()
          .filter(l -> !l.startsWith("#"))
          .map(l -> l.replaceAll("counter packets \\d+ bytes \\d+", "counter"))
          .map(l -> l.replaceAll("\\[\\d+:\\d+\\]", "[counters]"))
          .collect(Collectors.joining("\n"));
    }

    /** The names in a directory, sorted, or "absent". */
    private static String list(Path dir) throws IOException {
      if (!Files.isDirectory(dir)) {
        return "absent";
      }
      try (Stream<Path> names = Files.list(dir)) {
        return names
            .map(p -> p.getFileName().toString())
            .sorted()
            .collect(Collectors.joining("\n"));
      }
    }

    /** A command's standard output; a failure fails the test, with what it printed on stderr. */
    private static String out(String command) throws Exception {
      Path err = Files.createTempFile("host-state", ".err");
      try {
        Process p =
            new ProcessBuilder("bash", "-o", "pipefail", "-c", command)
                .redirectError(err.toFile())
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as("%s failed: %s", command, Files.readString(err)).isZero();
        return out;
      } finally {
        Files.delete(err);
      }
    }
  }
}
