package ca.helu.pallas.operator.dependent;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.api.ManifestParser;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.OperatorConfig;
import ca.helu.pallas.operator.render.FleetRenderer;
import ca.helu.pallas.operator.render.RenderedFleet;
import ca.helu.pallas.operator.render.SecretDigests;
import ca.helu.pallas.operator.render.StartGate;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Each dependent's desired() is a pure function of the rendered fleet. */
class DesiredTest {
  static final OperatorConfig CONFIG =
      OperatorConfig.fromEnvironment(
          Map.of(
              "PALLAS_RUNTIME_IMAGE",
              "registry.example/pallas:1",
              "PALLAS_IMAGE_PULL_SECRETS",
              "pull-a,pull-b"));
  static final RenderedFleet FLEET =
      FleetRenderer.render(
          ManifestParser.parse(
              """
              apiVersion: pallas.helu.ca/v1alpha1
              kind: PallasDeployment
              metadata: {name: fleet, namespace: ai, uid: u-1}
              spec:
                registry: {port: 23030}
                defaultModel: passthrough
                providers: {openai: {apiKey: {secretKeyRef: {name: llm, key: k}}}}
                mcpServers: [{name: tools, url: "http://t/mcp", headers: [{name: A, valueFrom: {value: s3cret}}]}]
                monitoring: {serviceMonitor: {enabled: true, interval: 30s, labels: {release: prom}}}
                agents:
                  - {name: tech_research, port: 23031, model: openai.x, replicas: 2,
                     resources: {requests: {cpu: "1"}, limits: {memory: 2Gi}}}
                  - {name: coord, servers: [tech_research, tools], sessionAffinity: ClientIP}
              """,
              "t"),
          name -> Optional.of(Map.of("k", "digest")));

  @Test
  void agentDeploymentRunsTheRuntimeRestrictedWithItsSecretsAndHash() {
    Deployment d =
        AgentDeploymentsDependentResource.desired(FLEET, FLEET.pods().get("tech_research"), CONFIG);
    assertThat(d.getMetadata().getName()).isEqualTo("fleet-tech-research");
    assertOwnedAndLabelled(d);
    assertThat(d.getSpec().getTemplate().getSpec().getImagePullSecrets())
        .extracting(r -> r.getName())
        .containsExactly("pull-a", "pull-b");
    assertThat(d.getSpec().getReplicas()).isEqualTo(2);
    assertThat(d.getSpec().getSelector().getMatchLabels())
        .isEqualTo(PallasNames.agentSelector("fleet", "tech_research"));
    assertThat(d.getSpec().getStrategy().getRollingUpdate().getMaxUnavailable().getIntVal())
        .isZero();
    var pod = d.getSpec().getTemplate().getSpec();
    assertThat(d.getSpec().getTemplate().getMetadata().getAnnotations())
        .containsEntry(
            PallasNames.CONFIG_HASH_ANNOTATION, FLEET.agents().get("tech_research").configHash());
    assertThat(pod.getAutomountServiceAccountToken()).isFalse();
    assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
    assertThat(pod.getSecurityContext().getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
    assertThat(pod.getTerminationGracePeriodSeconds())
        .isGreaterThan(CONFIG.drainSeconds() + Pods.PRE_STOP_SECONDS);
    Container c = pod.getContainers().get(0);
    assertThat(c.getImage()).isEqualTo("registry.example/pallas:1");
    assertThat(c.getArgs())
        .containsExactly(
            "serve",
            "-f",
            "/etc/pallas/deployment.yaml",
            "--agent",
            "tech_research",
            "--cluster",
            "--drain-timeout",
            "30",
            "--probe-port",
            "8086");
    assertThat(c.getPorts())
        .extracting(p -> p.getName() + "=" + p.getContainerPort())
        .containsExactly("http=23031", "probes=8086");
    for (var probe : List.of(c.getReadinessProbe(), c.getLivenessProbe(), c.getStartupProbe())) {
      assertThat(probe.getHttpGet().getPort().getStrVal()).isEqualTo("probes");
    }
    assertThat(c.getResources().getRequests().get("cpu").toString()).isEqualTo("1");
    assertThat(c.getEnv())
        .singleElement()
        .satisfies(e -> {
          assertThat(e.getValueFrom().getSecretKeyRef().getName()).isEqualTo("llm");
          assertThat(e.getValue()).isNull();
        });
    assertThat(c.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
    assertThat(c.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
    assertThat(c.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
    assertThat(c.getLifecycle().getPreStop().getSleep().getSeconds())
        .isEqualTo((long) Pods.PRE_STOP_SECONDS);
    assertThat(c.getVolumeMounts())
        .extracting(m -> m.getMountPath())
        .containsExactly(PallasNames.CONFIG_DIR, "/tmp");
    assertThat(
            AgentDeploymentsDependentResource.desired(FLEET, FLEET.pods().get("coord"), CONFIG)
                .getSpec()
                .getTemplate()
                .getSpec()
                .getContainers()
                .get(0)
                .getResources()
                .getLimits())
        .as("defaults")
        .containsKey("memory");
  }

  /**
   * A pod group with spec.auth: its pods run as the group's ServiceAccount, which its agents share,
   * with tokens for every agent one of them calls; an agent in a pod of its own keeps its own.
   */
  @Test
  void withAuthAPodGroupsAgentsShareTheGroupsIdentity() {
    RenderedFleet fleet =
        FleetRenderer.render(
            ManifestParser.parse(
                """
                apiVersion: pallas.helu.ca/v1alpha1
                kind: PallasDeployment
                metadata: {name: sec, namespace: ai, uid: u-3}
                spec:
                  defaultModel: passthrough
                  auth: {oidc: {issuerUrl: https://k/realms/p}}
                  podGroups: [{name: crew}]
                  agents:
                    - {name: helper, port: 24201}
                    - {name: lead, port: 24202, servers: [helper], podGroup: crew}
                    - {name: scout, port: 24203, servers: [lead], podGroup: crew}
                """,
                "t"),
            name -> Optional.empty());
    OperatorConfig config = OperatorConfig.fromEnvironment(Map.of("POD_NAMESPACE", "p"));

    assertThat(AgentServiceAccountsDependentResource.desired(fleet).values())
        .extracting(a -> a.getMetadata().getName())
        .containsExactly("sec-helper", "sec-crew");
    var crew =
        AgentDeploymentsDependentResource.desired(fleet, fleet.pods().get("crew"), config)
            .getSpec()
            .getTemplate()
            .getSpec();
    assertThat(crew.getServiceAccountName()).isEqualTo("sec-crew");
    assertThat(
            crew.getVolumes().stream()
                .filter(v -> v.getName().equals(PallasNames.IDENTITY_VOLUME))
                .findFirst()
                .orElseThrow()
                .getProjected()
                .getSources())
        .filteredOn(p -> p.getServiceAccountToken() != null)
        .extracting(p -> p.getServiceAccountToken().getPath())
        .containsExactly(PallasNames.API_TOKEN_FILE, "peers/helper", "peers/lead");
  }

  /**
   * With spec.auth (issue 18 §3): each agent runs as a ServiceAccount of its own (or the user's),
   * with projected tokens for the agents it calls, each with that agent's resource identifier as
   * audience, and one for the API server; the operator's ServiceAccount is named to it; the agents'
   * client secret reaches only the agent that exchanges tokens, and the registry.
   */
  @Test
  void withAuthEachAgentHasAnIdentityOfItsOwnAndTokensForTheAgentsItCalls() {
    RenderedFleet fleet =
        FleetRenderer.render(
            ManifestParser.parse(
                """
                apiVersion: pallas.helu.ca/v1alpha1
                kind: PallasDeployment
                metadata: {name: sec, namespace: ai, uid: u-2}
                spec:
                  defaultModel: passthrough
                  auth:
                    oidc:
                      issuerUrl: https://k/realms/p
                      client: {id: agents, secret: {secretKeyRef: {name: agents, key: secret}}}
                  mcpServers: [{name: tools, url: "http://t/mcp", tokenExchange: {audience: t}}]
                  agents:
                    - {name: helper, port: 24201, servers: [tools]}
                    - {name: lead, port: 24202, servers: [helper]}
                    - {name: own, port: 24203, pod: {serviceAccountName: mine}}
                """,
                "t"),
            name -> Optional.of(Map.of("secret", "digest")));
    OperatorConfig config =
        OperatorConfig.fromEnvironment(
            Map.of("POD_NAMESPACE", "pallas-system", "PALLAS_OPERATOR_SERVICE_ACCOUNT", "op"));

    assertThat(AgentServiceAccountsDependentResource.desired(fleet).values())
        .extracting(a -> a.getMetadata().getName())
        .containsExactly("sec-helper", "sec-lead");
    assertThat(AgentServiceAccountsDependentResource.desired(FLEET))
        .as("none without spec.auth")
        .isEmpty();

    var lead =
        AgentDeploymentsDependentResource.desired(fleet, fleet.pods().get("lead"), config)
            .getSpec()
            .getTemplate()
            .getSpec();
    assertThat(lead.getServiceAccountName()).isEqualTo("sec-lead");
    assertThat(lead.getAutomountServiceAccountToken()).isFalse();
    var identity =
        lead.getVolumes().stream()
            .filter(v -> v.getName().equals(PallasNames.IDENTITY_VOLUME))
            .findFirst()
            .orElseThrow()
            .getProjected()
            .getSources();
    assertThat(identity)
        .filteredOn(p -> p.getServiceAccountToken() != null)
        .extracting(
            p -> p.getServiceAccountToken().getPath(),
            p -> String.valueOf(p.getServiceAccountToken().getAudience()))
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(PallasNames.API_TOKEN_FILE, "null"),
            org.assertj.core.groups.Tuple.tuple(
                "peers/helper", "http://sec-helper.ai.svc:24201/mcp"));
    assertThat(identity)
        .filteredOn(p -> p.getConfigMap() != null)
        .singleElement()
        .satisfies(p -> assertThat(p.getConfigMap().getName()).isEqualTo("kube-root-ca.crt"));
    Container c = lead.getContainers().get(0);
    assertThat(c.getVolumeMounts())
        .anySatisfy(m -> {
          assertThat(m.getMountPath()).isEqualTo(PallasNames.IDENTITY_DIR);
          assertThat(m.getReadOnly()).isTrue();
        });
    assertThat(c.getEnv())
        .extracting(e -> e.getName() + "=" + e.getValue())
        .contains(
            "PALLAS_IDENTITY_DIR=" + PallasNames.IDENTITY_DIR,
            "PALLAS_OPERATOR_SUBJECT=system:serviceaccount:pallas-system:op")
        .noneMatch(e -> e.startsWith("PALLAS_SECRET_agents"));

    Container helper =
        AgentDeploymentsDependentResource.desired(fleet, fleet.pods().get("helper"), config)
            .getSpec()
            .getTemplate()
            .getSpec()
            .getContainers()
            .get(0);
    assertThat(helper.getEnv())
        .filteredOn(e -> e.getName().startsWith("PALLAS_SECRET_agents"))
        .singleElement()
        .satisfies(e -> {
          assertThat(e.getValueFrom().getSecretKeyRef().getName()).isEqualTo("agents");
          assertThat(e.getValueFrom().getSecretKeyRef().getKey()).isEqualTo("secret");
        });
    assertThat(
            AgentDeploymentsDependentResource.desired(fleet, fleet.pods().get("own"), config)
                .getSpec()
                .getTemplate()
                .getSpec()
                .getServiceAccountName())
        .as("the user's own ServiceAccount")
        .isEqualTo("mine");

    // the registry follows every agent as itself, under its own ServiceAccount
    var registry =
        RegistryDeploymentDependentResource.desired(fleet, config)
            .getSpec()
            .getTemplate()
            .getSpec();
    assertThat(registry.getServiceAccountName()).isEqualTo("sec-registry");
    assertThat(
            registry.getVolumes().stream()
                .filter(v -> v.getName().equals(PallasNames.IDENTITY_VOLUME))
                .findFirst()
                .orElseThrow()
                .getProjected()
                .getSources())
        .extracting(p -> p.getServiceAccountToken().getPath())
        .containsExactly("peers/helper", "peers/lead", "peers/own");
    assertThat(registry.getContainers().get(0).getEnv())
        .extracting(e -> e.getName() + "=" + e.getValue())
        .contains("PALLAS_IDENTITY_DIR=" + PallasNames.IDENTITY_DIR);
    // its call_tool exchanges tokens for the tools server as helper does: it has the secret too
    assertThat(registry.getContainers().get(0).getEnv())
        .filteredOn(e -> e.getName().startsWith("PALLAS_SECRET_agents"))
        .singleElement()
        .satisfies(
            e -> assertThat(e.getValueFrom().getSecretKeyRef().getKey()).isEqualTo("secret"));
  }

  @Test
  void onlyStartableAgentsHaveADeployment() {
    StartGate gate =
        new StartGate(Set.of("tech_research"), Map.of("coord", List.of("tech_research")));
    assertThat(AgentDeploymentsDependentResource.desired(FLEET, gate, CONFIG).values())
        .extracting(x -> x.getMetadata().getName())
        .containsExactly("fleet-tech-research");
  }

  @Test
  void anAutoscaledAgentHasAnAutoscalerOnceStartableAndNoReplicaCount() {
    RenderedFleet fleet =
        FleetRenderer.render(
            ManifestParser.parse(
                """
                apiVersion: pallas.helu.ca/v1alpha1
                kind: PallasDeployment
                metadata: {name: fleet, namespace: ai, uid: u-1}
                spec:
                  defaultModel: passthrough
                  agents:
                    - {name: a, autoscaling: {maxReplicas: 4}}
                    - {name: b, replicas: 2}
                    - {name: c, autoscaling: {maxReplicas: 2}}
                """,
                "t"),
            SecretDigests.NONE);
    StartGate gate = new StartGate(Set.of("a", "b"), Map.of("c", List.of("b")));
    var autoscalers = AgentAutoscalersDependentResource.desired(fleet, gate).values();
    assertThat(autoscalers).extracting(h -> h.getMetadata().getName()).containsExactly("fleet-a");
    var hpa = autoscalers.iterator().next();
    assertOwnedAndLabelled(hpa);
    assertThat(hpa.getSpec().getMinReplicas()).isEqualTo(1);
    assertThat(hpa.getSpec().getMetrics().get(0).getPods().getTarget().getAverageValue())
        .hasToString("10");
    assertThat(
            AgentDeploymentsDependentResource.desired(fleet, fleet.pods().get("a"), CONFIG)
                .getSpec()
                .getReplicas())
        .isNull();
    assertThat(
            AgentDeploymentsDependentResource.desired(fleet, fleet.pods().get("b"), CONFIG)
                .getSpec()
                .getReplicas())
        .isEqualTo(2);
  }

  @Test
  void anAgentOfSeveralPodsHasADisruptionBudgetAndEveryAgentSpreads() {
    var budgets = AgentDisruptionBudgetsDependentResource.desired(FLEET).values();
    assertThat(budgets)
        .extracting(b -> b.getMetadata().getName())
        .containsExactly("fleet-tech-research");
    var budget = budgets.iterator().next();
    assertOwnedAndLabelled(budget);
    assertThat(budget.getSpec().getMaxUnavailable().getIntVal()).isEqualTo(1);
    assertThat(budget.getSpec().getSelector().getMatchLabels())
        .isEqualTo(PallasNames.agentSelector("fleet", "tech_research"));
    var spread =
        AgentDeploymentsDependentResource.desired(FLEET, FLEET.pods().get("coord"), CONFIG)
            .getSpec()
            .getTemplate()
            .getSpec()
            .getTopologySpreadConstraints();
    assertThat(spread)
        .extracting(c -> c.getTopologyKey() + " " + c.getWhenUnsatisfiable())
        .containsExactly(
            "kubernetes.io/hostname ScheduleAnyway", "topology.kubernetes.io/zone ScheduleAnyway");
    assertThat(spread.get(0).getLabelSelector().getMatchLabels())
        .isEqualTo(PallasNames.agentSelector("fleet", "coord"));
  }

  @Test
  void servicesSelectTheirPodsOnTheAgentPort() {
    Service s = AgentServicesDependentResource.desired(FLEET, FLEET.agents().get("coord"));
    assertOwnedAndLabelled(s);
    assertThat(s.getMetadata().getName()).isEqualTo("fleet-coord");
    assertThat(s.getSpec().getPorts().get(0).getPort()).isEqualTo(23032);
    assertThat(s.getSpec().getPorts().get(0).getName()).isEqualTo(PallasNames.PORT_NAME);
    assertThat(s.getSpec().getSelector()).isEqualTo(PallasNames.agentSelector("fleet", "coord"));
    assertThat(s.getSpec().getSessionAffinity()).isEqualTo("ClientIP");
    assertThat(
            AgentServicesDependentResource.desired(FLEET, FLEET.agents().get("tech_research"))
                .getSpec()
                .getSessionAffinity())
        .as("Kubernetes' default, not applied")
        .isNull();
  }

  @Test
  void configMapAndInlineSecretSplitTheSecretValueOut() {
    var cm = ConfigMapDependentResource.desired(FLEET);
    assertOwnedAndLabelled(cm);
    assertThat(cm.getData().get(PallasNames.CONFIG_KEY)).doesNotContain("s3cret");
    Secret inline = InlineSecretDependentResource.desired(FLEET);
    assertOwnedAndLabelled(inline);
    assertThat(inline.getMetadata().getName()).isEqualTo("fleet-inline");
    assertThat(
            new String(
                Base64.getDecoder().decode(inline.getData().get("mcpServers.tools.headers.0")),
                StandardCharsets.UTF_8))
        .isEqualTo("s3cret");
  }

  @Test
  void registryRunsUnderItsOwnAccountThatMayOnlyReadTheConfigMap() {
    Deployment d = RegistryDeploymentDependentResource.desired(FLEET, CONFIG);
    assertOwnedAndLabelled(d);
    var pod = d.getSpec().getTemplate().getSpec();
    assertThat(pod.getServiceAccountName()).isEqualTo("fleet-registry");
    assertThat(pod.getImagePullSecrets())
        .extracting(r -> r.getName())
        .containsExactly("pull-a", "pull-b");
    assertThat(pod.getContainers().get(0).getArgs())
        .containsExactly("registry", "--config-map", "fleet-config", "--namespace", "ai");
    assertThat(pod.getContainers().get(0).getPorts().get(0).getContainerPort()).isEqualTo(23030);
    // the registry serves no MCP sessions: probed on its one port
    assertThat(pod.getContainers().get(0).getReadinessProbe().getHttpGet().getPort().getStrVal())
        .isEqualTo(PallasNames.PORT_NAME);
    var rule = RegistryAccess.role(FLEET).getRules().get(0);
    assertThat(rule.getResources()).containsExactly("configmaps");
    assertThat(rule.getResourceNames()).containsExactly("fleet-config");
    assertThat(rule.getVerbs()).containsExactly("get", "list", "watch");
    assertThat(RegistryAccess.roleBinding(FLEET).getSubjects().get(0).getName())
        .isEqualTo("fleet-registry");
    assertThat(
            RegistryServiceDependentResource.desired(FLEET).getSpec().getPorts().get(0).getPort())
        .isEqualTo(23030);
  }

  /**
   * Its /mcp asks for the fleet's static tokens (docs/runtime.md, "The registry's MCP endpoint").
   */
  @Test
  void aRegistryOfAFleetWithStaticTokensMountsThemAsTheAgentsDo() {
    RenderedFleet secured =
        FleetRenderer.render(
            ManifestParser.parse(
                """
                apiVersion: pallas.helu.ca/v1alpha1
                kind: PallasDeployment
                metadata: {name: fleet, namespace: ai, uid: u-1}
                spec:
                  defaultModel: passthrough
                  auth: {staticTokens: {secretName: callers}}
                  agents: [{name: a}]
                """,
                "t"),
            name -> Optional.of(Map.of("daedalus", "digest")));
    var pod =
        RegistryDeploymentDependentResource.desired(secured, CONFIG)
            .getSpec()
            .getTemplate()
            .getSpec();
    var tokens =
        pod.getVolumes().stream().filter(v -> v.getSecret() != null).findFirst().orElseThrow();
    assertThat(tokens.getSecret().getSecretName()).isEqualTo("callers");
    var registry = pod.getContainers().get(0);
    assertThat(registry.getVolumeMounts())
        .anySatisfy(m -> {
          assertThat(m.getName()).isEqualTo(tokens.getName());
          assertThat(m.getMountPath()).isEqualTo(PallasNames.STATIC_TOKENS_DIR);
          assertThat(m.getReadOnly()).isTrue();
        });
    assertThat(registry.getEnv())
        .anySatisfy(e -> {
          assertThat(e.getName()).isEqualTo("PALLAS_STATIC_TOKENS_DIR");
          assertThat(e.getValue()).isEqualTo(PallasNames.STATIC_TOKENS_DIR);
        });
    // without auth: neither (its one variable is the header of the server coord calls)
    var open =
        RegistryDeploymentDependentResource.desired(FLEET, CONFIG)
            .getSpec()
            .getTemplate()
            .getSpec();
    assertThat(open.getVolumes()).noneMatch(v -> v.getSecret() != null);
    assertThat(open.getContainers().get(0).getEnv())
        .extracting(e -> e.getName())
        .containsExactly("PALLAS_SECRET_fleet_hinline__mcpServers_dtools_dheaders_d0");
  }

  private static final String CALLING =
      """
      apiVersion: pallas.helu.ca/v1alpha1
      kind: PallasDeployment
      metadata: {name: fleet, namespace: ai, uid: u-1}
      spec:
        providers: {openai: {apiKey: {secretKeyRef: {name: llm, key: openai}}}}
        auth: {staticTokens: {secretName: callers}}
        mcpServers:
          - name: argos
            url: http://argos/mcp
            headers: [{name: Authorization, valueFrom: {secretKeyRef: {name: argos, key: token}}}]
          - name: idle
            url: http://idle/mcp
            headers: [{name: X-Key, valueFrom: {secretKeyRef: {name: idle, key: key}}}]
        agents: [{name: a, model: openai.m, servers: [argos], instruction: one}]
      """;

  private static final Map<String, Map<String, String>> CALLING_DIGESTS =
      Map.of(
          "llm", Map.of("openai", "d-llm"),
          "callers", Map.of("daedalus", "d-daedalus"),
          "argos", Map.of("token", "d-argos"),
          "idle", Map.of("key", "d-idle"));

  private static RenderedFleet calling(String yaml, Map<String, Map<String, String>> digests) {
    return FleetRenderer.render(
        ManifestParser.parse(yaml, "t"), name -> Optional.ofNullable(digests.get(name)));
  }

  private static Map<String, Map<String, String>> rotated(String secret, String key) {
    Map<String, Map<String, String>> digests = new java.util.HashMap<>(CALLING_DIGESTS);
    digests.put(secret, Map.of(key, "rotated"));
    return digests;
  }

  /**
   * The registry's call_tool calls the servers the agents call, with the same headers
   * (docs/operator.md, "The registry follows the spec in well under a second"): it gets exactly
   * their Secret keys, by secretKeyRef as the agents do, and no provider key nor the key of a
   * server no agent calls. What it reads once at start rolls it: those keys, a static token,
   * spec.auth; nothing else it follows live does.
   */
  @Test
  void theRegistryGetsTheHeaderKeysOfTheServersItMayCallAndRollsWhenTheyChange() {
    RenderedFleet fleet = calling(CALLING, CALLING_DIGESTS);
    Deployment d = RegistryDeploymentDependentResource.desired(fleet, CONFIG);
    Container registry = d.getSpec().getTemplate().getSpec().getContainers().get(0);
    assertThat(registry.getEnv())
        .extracting(e -> e.getName())
        // and, with spec.auth, where its identity is, which it presents to the agents it follows
        .containsExactlyInAnyOrder(
            "PALLAS_SECRET_argos__token", "PALLAS_STATIC_TOKENS_DIR", "PALLAS_IDENTITY_DIR");
    var header =
        registry.getEnv().stream()
            .filter(e -> e.getName().equals("PALLAS_SECRET_argos__token"))
            .findFirst()
            .orElseThrow();
    assertThat(header.getValue()).isNull();
    assertThat(header.getValueFrom().getSecretKeyRef().getName()).isEqualTo("argos");
    assertThat(header.getValueFrom().getSecretKeyRef().getKey()).isEqualTo("token");
    String hash = fleet.registry().configHash();
    assertThat(d.getSpec().getTemplate().getMetadata().getAnnotations())
        .containsEntry(PallasNames.CONFIG_HASH_ANNOTATION, hash);

    assertThat(calling(CALLING, rotated("argos", "token")).registry().configHash())
        .isNotEqualTo(hash);
    assertThat(calling(CALLING, rotated("callers", "daedalus")).registry().configHash())
        .isNotEqualTo(hash);
    assertThat(
            calling(CALLING.replace("auth: {", "auth: {openHealth: false, "), CALLING_DIGESTS)
                .registry()
                .configHash())
        .isNotEqualTo(hash);
    assertThat(calling(CALLING, rotated("llm", "openai")).registry().configHash()).isEqualTo(hash);
    assertThat(calling(CALLING, rotated("idle", "key")).registry().configHash()).isEqualTo(hash);
    assertThat(
            calling(CALLING.replace("instruction: one", "instruction: two"), CALLING_DIGESTS)
                .registry()
                .configHash())
        .isEqualTo(hash);
  }

  @Test
  void serviceMonitorSelectsEveryPodOfTheInstance() {
    ServiceMonitor m = ServiceMonitorDependentResource.desired(FLEET);
    assertOwnedAndLabelled(m);
    assertThat(m.getMetadata().getLabels()).containsEntry("release", "prom");
    assertThat(m.getSpec())
        .containsEntry(
            "endpoints", List.of(Map.of("port", "http", "path", "/metrics", "interval", "30s")))
        .containsEntry("namespaceSelector", Map.of("matchNames", List.of("ai")));
  }

  @Test
  void desiredIsPure() {
    assertThat(AgentDeploymentsDependentResource.desired(FLEET, FLEET.pods().get("coord"), CONFIG))
        .isEqualTo(
            AgentDeploymentsDependentResource.desired(
                FleetRenderer.render(FLEET.primary(), name -> Optional.of(Map.of("k", "digest"))),
                FLEET.pods().get("coord"),
                CONFIG));
    assertThat(FleetRenderer.render(FLEET.primary(), SecretDigests.NONE).missingSecrets())
        .isNotEmpty();
  }

  private static void assertOwnedAndLabelled(HasMetadata o) {
    assertThat(o.getMetadata().getNamespace()).isEqualTo("ai");
    assertThat(o.getMetadata().getLabels())
        .containsAllEntriesOf(PallasNames.instanceLabels("fleet"));
    assertThat(o.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(r -> {
          assertThat(r.getUid()).isEqualTo("u-1");
          assertThat(r.getController()).isTrue();
        });
  }
}
