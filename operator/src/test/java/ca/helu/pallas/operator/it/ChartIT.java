package ca.helu.pallas.operator.it;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.operator.OperatorConfig;
import ca.helu.pallas.operator.testing.Helm;
import ca.helu.pallas.operator.testing.Helm.Rendered;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The chart through the real helm: lint, the default install and each documented variant
 * (docs/install.md) rendered and checked object by object, and values.schema.json refusing what it
 * should.
 */
class ChartIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String FULLNAME = "pallas-pallas-operator";
  private static final Path CRD_FILE =
      Path.of("..", "crds", "pallasdeployments.pallas.helu.ca-v1.yml");

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "watchNamespaces={ai,research}",
        "metrics.serviceMonitor.enabled=true,prometheusRule.enabled=true,dashboards.enabled=true",
        "crds.install=false,rbac.aggregateToDefaultRoles=false,resourceSelector=operator=canary",
        "leaderElection.enabled=false,replicaCount=1,logLevel=DEBUG",
        "store.postgresql.enabled=true,store.fleetNamespaces={ai,research}",
        "store.postgresql.enabled=true,store.existingSecret=my-store",
        "store.postgresql.enabled=true,store.fleetDefault=true,store.fleetNamespaces={default}",
        "nameOverride=agents-operator,podLabels.team=ml,podAnnotations.owner=ml",
        "fullnameOverride=ops,priorityClassName=system-cluster-critical,nodeSelector.pool=ops"
      })
  void lintsStrictly(String set) throws Exception {
    List<String> args = new ArrayList<>(List.of("lint", "--strict", Helm.CHART.toString()));
    args.addAll(List.of("--kube-version", ca.helu.pallas.operator.testing.KubeCluster.VERSION));
    if (!set.isEmpty()) {
      args.addAll(List.of("--set", set));
    }
    Helm.Result r = Helm.run(args);
    assertThat(r.exitCode()).as(r.output()).isZero();
    assertThat(r.output()).contains("1 chart(s) linted, 0 chart(s) failed");
  }

  @Test
  void theDefaultInstallIsRestrictedAndNamesTheImagesOfItsAppVersion() throws Exception {
    Rendered chart = Helm.template();
    JsonNode pod = chart.get("Deployment", FULLNAME).at("/spec/template/spec");
    assertThat(pod.at("/securityContext/runAsNonRoot").asBoolean()).isTrue();
    assertThat(pod.at("/securityContext/seccompProfile/type").asText()).isEqualTo("RuntimeDefault");
    assertThat(pod.at("/serviceAccountName").asText()).isEqualTo(FULLNAME);
    JsonNode container = pod.at("/containers/0");
    assertThat(container.at("/securityContext/allowPrivilegeEscalation").asBoolean()).isFalse();
    assertThat(container.at("/securityContext/readOnlyRootFilesystem").asBoolean()).isTrue();
    assertThat(container.at("/securityContext/capabilities/drop").toString())
        .isEqualTo("[\"ALL\"]");
    assertThat(container.at("/livenessProbe/httpGet/path").asText()).isEqualTo("/livez");
    assertThat(container.at("/readinessProbe/httpGet/path").asText()).isEqualTo("/readyz");
    assertThat(container.at("/ports/0/containerPort").asInt()).isEqualTo(8080);
    assertThat(container.at("/resources/limits/memory").asText()).isEqualTo("512Mi");

    // the images this build makes: the chart's appVersion is the images' tag
    String tag = imageTag();
    assertThat(container.get("image").asText()).isEqualTo("pallas-operator:" + tag);
    Map<String, String> env = env(container);
    assertThat(env)
        .containsEntry("PALLAS_RUNTIME_IMAGE", "pallas-agent-runtime:" + tag)
        .containsEntry("PALLAS_WATCH_NAMESPACES", "")
        .containsEntry("PALLAS_LEADER_ELECTION", "true")
        .containsEntry("PALLAS_HTTP_PORT", "8080");
    assertThat(OperatorConfig.DEFAULT_RUNTIME_IMAGE).isEqualTo("pallas-agent-runtime:" + tag);
    assertThat(YAML.readTree(Helm.CHART.resolve("Chart.yaml").toFile()).get("appVersion").asText())
        .isEqualTo(tag);

    // labels every object carries
    for (JsonNode object : chart.objects()) {
      assertThat(object.at("/metadata/labels/app.kubernetes.io~1part-of").asText())
          .as("%s %s", object.get("kind"), object.at("/metadata/name"))
          .isEqualTo("pallas");
    }
    assertThat(chart.get("Service", FULLNAME + "-metrics").at("/spec/ports/0/name").asText())
        .isEqualTo("http");

    // nothing that needs the Prometheus Operator or Grafana unless asked for
    assertThat(chart.ofKind("ServiceMonitor")).isEmpty();
    assertThat(chart.ofKind("PrometheusRule")).isEmpty();
    assertThat(chart.ofKind("ConfigMap")).isEmpty();
  }

  @Test
  void rbacIsAClusterRoleByDefaultAndRolesPerNamespaceWhenWatchNamespacesIsSet() throws Exception {
    Rendered all = Helm.template();
    JsonNode clusterRole = all.get("ClusterRole", FULLNAME);
    assertThat(rules(clusterRole))
        .containsEntry("pallas.helu.ca/pallasdeployments", Set.of("get", "list", "watch"))
        .containsEntry("pallas.helu.ca/pallasdeployments/status", Set.of("get", "patch", "update"))
        .containsEntry("/events", Set.of("create", "patch"))
        .containsEntry("apps/deployments", WRITE)
        .containsEntry("/configmaps", WRITE)
        .containsEntry("/secrets", WRITE)
        .containsEntry("/services", WRITE)
        .containsEntry("/serviceaccounts", WRITE)
        .containsEntry("rbac.authorization.k8s.io/roles", WRITE)
        .containsEntry("rbac.authorization.k8s.io/rolebindings", WRITE)
        .containsEntry("monitoring.coreos.com/servicemonitors", WRITE)
        .containsEntry("autoscaling/horizontalpodautoscalers", WRITE)
        .containsEntry("policy/poddisruptionbudgets", WRITE)
        .containsEntry("networking.k8s.io/networkpolicies", WRITE)
        .hasSize(14);
    assertThat(clusterRole.toString()).doesNotContain("\"*\"");
    assertThat(all.get("ClusterRoleBinding", FULLNAME).at("/subjects/0/namespace").asText())
        .isEqualTo(Helm.NAMESPACE);
    JsonNode crds = all.get("ClusterRole", FULLNAME + "-crds");
    assertThat(crds.at("/rules/0/resourceNames").toString())
        .isEqualTo("[\"servicemonitors.monitoring.coreos.com\"]");
    JsonNode lease = all.get("Role", FULLNAME + "-leader-election");
    assertThat(lease.at("/metadata/namespace").asText()).isEqualTo(Helm.NAMESPACE);
    assertThat(lease.at("/rules/1/resourceNames").toString()).isEqualTo("[\"pallas-operator\"]");
    assertThat(lease.at("/rules/0/verbs").toString()).isEqualTo("[\"create\"]");
    // tokens of its own ServiceAccount, for agents that let nobody in without one, and no other's
    JsonNode tokens = all.get("Role", FULLNAME + "-own-tokens");
    assertThat(rules(tokens))
        .containsExactly(Map.entry("/serviceaccounts/token", Set.of("create")));
    assertThat(tokens.at("/rules/0/resourceNames").toString()).isEqualTo("[\"" + FULLNAME + "\"]");
    JsonNode container = all.get("Deployment", FULLNAME).at("/spec/template/spec/containers/0");
    assertThat(container.get("env").findParents("name"))
        .filteredOn(e -> e.get("name").asText().equals("PALLAS_OPERATOR_SERVICE_ACCOUNT"))
        .singleElement()
        .satisfies(e ->
            assertThat(e.at("/valueFrom/fieldRef/fieldPath").asText())
                .isEqualTo("spec.serviceAccountName"));

    Rendered some = Helm.template("--set", "watchNamespaces={ai,research}");
    assertThat(some.ofKind("ClusterRole").stream().map(r -> r.at("/metadata/name").asText()))
        .doesNotContain(FULLNAME);
    for (String ns : List.of("ai", "research")) {
      JsonNode role =
          some.ofKind("Role").stream()
              .filter(r -> r.at("/metadata/namespace").asText().equals(ns))
              .findFirst()
              .orElseThrow();
      assertThat(rules(role)).isEqualTo(rules(clusterRole));
    }
    // two namespaces, the Lease and the operator's own tokens
    assertThat(some.ofKind("RoleBinding")).hasSize(4);
    assertThat(env(some.get("Deployment", FULLNAME).at("/spec/template/spec/containers/0")))
        .containsEntry("PALLAS_WATCH_NAMESPACES", "ai,research");
  }

  @Test
  void usersGetPallasDeploymentsThroughTheDefaultRoles() throws Exception {
    Rendered chart = Helm.template();
    assertThat(
            chart
                .get("ClusterRole", "pallas-view")
                .at("/metadata/labels")
                .get("rbac.authorization.k8s.io/aggregate-to-view")
                .asText())
        .isEqualTo("true");
    assertThat(rules(chart.get("ClusterRole", "pallas-view")).values())
        .allSatisfy(verbs -> assertThat(verbs).containsExactlyInAnyOrder("get", "list", "watch"));
    assertThat(rules(chart.get("ClusterRole", "pallas-edit")))
        .containsEntry(
            "pallas.helu.ca/pallasdeployments",
            Set.of(
                "get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"));
    assertThat(
            chart
                .get("ClusterRole", "pallas-admin")
                .at("/metadata/labels")
                .get("rbac.authorization.k8s.io/aggregate-to-admin")
                .asText())
        .isEqualTo("true");
    assertThat(Helm.template("--set", "rbac.aggregateToDefaultRoles=false").ofKind("ClusterRole"))
        .extracting(r -> r.at("/metadata/name").asText())
        .containsExactlyInAnyOrder(FULLNAME, FULLNAME + "-crds");
  }

  @Test
  void theCrdIsTheFileInCrdsKeptOnUninstallUnlessManagedElsewhere() throws Exception {
    JsonNode rendered =
        Helm.template().get("CustomResourceDefinition", "pallasdeployments.pallas.helu.ca");
    JsonNode file = YAML.readTree(CRD_FILE.toFile());
    // helm's YAML round trip writes 1.0 as 1: numbers compare by value
    Comparator<JsonNode> byValue =
        (a, b) ->
            a.isNumber() && b.isNumber()
                ? a.decimalValue().compareTo(b.decimalValue())
                : a.equals(b) ? 0 : 1;
    assertThat(rendered.get("spec").equals(byValue, file.get("spec")))
        .as("the rendered CRD's spec is the one of %s", CRD_FILE)
        .isTrue();
    assertThat(rendered.at("/metadata/annotations/helm.sh~1resource-policy").asText())
        .isEqualTo("keep");
    assertThat(rendered.at("/metadata/labels/app.kubernetes.io~1part-of").asText())
        .isEqualTo("pallas");
    assertThat(Files.isSymbolicLink(Helm.CHART.resolve("files/" + CRD_FILE.getFileName())))
        .as("the chart links the generated CRD instead of copying it")
        .isTrue();

    assertThat(
            Helm.template("--set", "crds.keep=false")
                .get("CustomResourceDefinition", "pallasdeployments.pallas.helu.ca")
                .at("/metadata/annotations/helm.sh~1resource-policy")
                .isMissingNode())
        .isTrue();
    assertThat(Helm.template("--set", "crds.install=false").ofKind("CustomResourceDefinition"))
        .isEmpty();
  }

  @Test
  void monitoringAssetsRenderWhenEnabled() throws Exception {
    Rendered chart =
        Helm.template(
            "--set",
            "metrics.serviceMonitor.enabled=true,prometheusRule.enabled=true,"
                + "dashboards.enabled=true",
            // --set keeps 0.25 a string, which the schema refuses; --set-json makes it a number
            "--set-json",
            "prometheusRule.errorRate=0.25");
    JsonNode monitor = chart.get("ServiceMonitor", FULLNAME);
    assertThat(monitor.at("/spec/endpoints/0/port").asText()).isEqualTo("http");
    assertThat(monitor.at("/spec/selector/matchLabels"))
        .isEqualTo(chart.get("Service", FULLNAME + "-metrics").at("/spec/selector"));

    JsonNode rule = chart.get("PrometheusRule", FULLNAME);
    List<String> alerts = new ArrayList<>();
    rule.at("/spec/groups/0/rules").forEach(r -> alerts.add(r.get("alert").asText()));
    assertThat(alerts)
        .containsExactly(
            "PallasTargetDown",
            "PallasLLMProviderDown",
            "PallasDownstreamUnreachable",
            "PallasHighErrorRate",
            "PallasSlowResponses",
            "PallasTokenBudgetExceeded",
            "PallasPodRestarting",
            "PallasAgentUnhealthy",
            "PallasStoreDown");
    assertThat(rule.toString()).doesNotContain("${").contains("> 0.25");
    for (JsonNode r : rule.at("/spec/groups/0/rules")) {
      assertThat(r.at("/annotations/runbook_url").asText())
          .endsWith("docs/operations.md#" + r.get("alert").asText().toLowerCase());
      assertThat(r.at("/annotations/summary").asText()).isNotBlank();
      assertThat(r.at("/annotations/description").asText()).isNotBlank();
    }

    JsonNode dashboard = chart.ofKind("ConfigMap").get(0);
    assertThat(dashboard.at("/metadata/labels/grafana_dashboard").asText()).isEqualTo("1");
    JsonNode json = JSON.readTree(dashboard.at("/data/pallas-agents.json").asText());
    assertThat(json.get("title").asText()).contains("Pallas");
    assertThat(json.get("panels").size()).isGreaterThanOrEqualTo(11);
  }

  @Test
  void imageReferencesTakeRegistryTagAndDigest() throws Exception {
    String digest = "sha256:" + "ab".repeat(32);
    JsonNode container =
        Helm.template(
                "--set",
                "image.registry=registry.example:5000,image.digest=" + digest,
                "--set",
                "runtimeImage.registry=registry.example:5000,runtimeImage.tag=0.2.0-rc1,"
                    + "runtimeImage.pullPolicy=Always,runtimeImage.pullSecrets={regcred}")
            .get("Deployment", FULLNAME)
            .at("/spec/template/spec/containers/0");
    assertThat(container.get("image").asText())
        .isEqualTo("registry.example:5000/pallas-operator@" + digest);
    assertThat(env(container))
        .containsEntry(
            "PALLAS_RUNTIME_IMAGE", "registry.example:5000/pallas-agent-runtime:0.2.0-rc1")
        .containsEntry("PALLAS_IMAGE_PULL_POLICY", "Always")
        .containsEntry("PALLAS_IMAGE_PULL_SECRETS", "regcred");
  }

  /** docs/install.md, "The operator's traces": OTEL_* variables, the headers by reference. */
  @Test
  void theOperatorTracesOnlyWhenGivenAnEndpointItsHeadersByReference() throws Exception {
    assertThat(
            env(Helm.template().get("Deployment", FULLNAME).at("/spec/template/spec/containers/0")))
        .doesNotContainKeys("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS");
    JsonNode container =
        Helm.template(
                "--set",
                "tracing.endpoint=http://collector.observability:4318,tracing.samplingRatio=0.25,"
                    + "tracing.headersSecret.name=otel")
            .get("Deployment", FULLNAME)
            .at("/spec/template/spec/containers/0");
    assertThat(env(container))
        .containsEntry("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector.observability:4318")
        .containsEntry("OTEL_TRACES_SAMPLER", "parentbased_traceidratio")
        .containsEntry("OTEL_TRACES_SAMPLER_ARG", "0.25")
        .containsEntry("OTEL_SERVICE_NAME", "pallas-operator");
    JsonNode headers = null;
    for (JsonNode e : container.get("env")) {
      if (e.get("name").asText().equals("OTEL_EXPORTER_OTLP_HEADERS")) {
        headers = e;
      }
    }
    assertThat(headers).isNotNull();
    assertThat(headers.has("value")).as("never a value").isFalse();
    assertThat(headers.at("/valueFrom/secretKeyRef/name").asText()).isEqualTo("otel");
    assertThat(headers.at("/valueFrom/secretKeyRef/key").asText()).isEqualTo("headers");
  }

  @Test
  void theChartRunsNoDatabaseUnlessAsked() throws Exception {
    Rendered chart = Helm.template();
    assertThat(chart.ofKind("StatefulSet")).isEmpty();
    assertThat(chart.ofKind("Secret")).isEmpty();
  }

  /**
   * README's quick start (examples/quickstart/values.yaml): the chart's PostgreSQL, its Secret in
   * the fleets' namespace, and the operator told to keep every fleet without spec.store there; the
   * chart's own defaults tell it nothing (fleets keep conversations in memory).
   */
  @Test
  void theQuickStartValuesMakeTheChartsStoreEveryFleetsDefault() throws Exception {
    Rendered chart = Helm.template("-f", "../examples/quickstart/values.yaml");
    assertThat(chart.ofKind("StatefulSet")).hasSize(1);
    assertThat(chart.ofKind("Secret"))
        .extracting(x -> x.at("/metadata/namespace").asText())
        .containsExactlyInAnyOrder(Helm.NAMESPACE, "default");
    assertThat(operatorEnv(chart).get("PALLAS_DEFAULT_STORE_SECRET")).isEqualTo("pallas-store");
    assertThat(
            operatorEnv(
                    Helm.template(
                        "-f",
                        "../examples/quickstart/values.yaml",
                        "--set",
                        "store.existingSecret=my-store"))
                .get("PALLAS_DEFAULT_STORE_SECRET"))
        .isEqualTo("my-store");
    assertThat(operatorEnv(Helm.template())).doesNotContainKey("PALLAS_DEFAULT_STORE_SECRET");
  }

  private static Map<String, String> operatorEnv(Rendered chart) {
    Map<String, String> env = new TreeMap<>();
    for (JsonNode e :
        chart.get("Deployment", FULLNAME).at("/spec/template/spec/containers/0/env")) {
      env.put(e.get("name").asText(), e.path("value").asText(null));
    }
    return env;
  }

  /** docs/install.md, "A durable fleet": the values in examples/durable/. */
  @Test
  void theDurableValuesRunAPostgresqlWithItsSecretInEveryFleetNamespace() throws Exception {
    Rendered chart = Helm.template("-f", "../examples/durable/values.yaml");
    String name = FULLNAME + "-postgresql";
    JsonNode set = chart.get("StatefulSet", name);
    JsonNode pod = set.at("/spec/template/spec");
    assertThat(pod.at("/securityContext/runAsNonRoot").asBoolean()).isTrue();
    assertThat(pod.at("/securityContext/runAsUser").asInt()).isEqualTo(999);
    assertThat(pod.at("/securityContext/fsGroup").asInt()).isEqualTo(999);
    assertThat(pod.at("/securityContext/seccompProfile/type").asText()).isEqualTo("RuntimeDefault");
    assertThat(pod.at("/automountServiceAccountToken").asBoolean(true)).isFalse();
    JsonNode container = pod.at("/containers/0");
    assertThat(container.get("image").asText()).isEqualTo("postgres:17");
    // a user named: pg_isready would look its UID up, which an arbitrary one (OpenShift) lacks
    for (String probe : List.of("startupProbe", "readinessProbe", "livenessProbe")) {
      assertThat(container.at("/" + probe + "/exec/command").toString())
          .contains("\"pg_isready\",\"-U\",\"pallas\"");
    }
    assertThat(container.at("/securityContext/allowPrivilegeEscalation").asBoolean()).isFalse();
    assertThat(container.at("/securityContext/readOnlyRootFilesystem").asBoolean()).isTrue();
    assertThat(container.at("/securityContext/capabilities/drop").toString())
        .isEqualTo("[\"ALL\"]");
    // user and password by reference, from the Secret the fleets read
    for (JsonNode env : container.get("env")) {
      if (env.get("name").asText().matches("POSTGRES_(USER|PASSWORD)")) {
        assertThat(env.has("value")).isFalse();
        assertThat(env.at("/valueFrom/secretKeyRef/name").asText()).isEqualTo("pallas-store");
      }
    }
    JsonNode claim = set.at("/spec/volumeClaimTemplates/0");
    assertThat(claim.at("/spec/resources/requests/storage").asText()).isEqualTo("8Gi");
    assertThat(container.at("/volumeMounts").findValuesAsText("name")).contains("data");
    JsonNode service = chart.get("Service", name);
    assertThat(service.at("/spec/ports/0/port").asInt()).isEqualTo(5432);
    assertThat(service.get("spec").get("selector")).isEqualTo(set.at("/spec/selector/matchLabels"));
    // no selector of the operator's picks the database up
    JsonNode operatorSelector = chart.get("Deployment", FULLNAME).at("/spec/selector/matchLabels");
    assertThat(set.at("/spec/template/metadata/labels/app.kubernetes.io~1name").asText())
        .isNotEqualTo(operatorSelector.at("/app.kubernetes.io~1name").asText());

    List<JsonNode> secrets = chart.ofKind("Secret");
    assertThat(secrets)
        .extracting(x -> x.at("/metadata/namespace").asText())
        .containsExactlyInAnyOrder(Helm.NAMESPACE, "default");
    for (JsonNode secret : secrets) {
      assertThat(secret.at("/metadata/name").asText()).isEqualTo("pallas-store");
      assertThat(secret.at("/metadata/annotations/helm.sh~1resource-policy").asText())
          .isEqualTo("keep");
      assertThat(decode(secret, "url"))
          .isEqualTo("jdbc:postgresql://" + name + "." + Helm.NAMESPACE + ".svc:5432/pallas");
      assertThat(decode(secret, "username")).isEqualTo("pallas");
      assertThat(decode(secret, "password"))
          .hasSize(32)
          .isEqualTo(decode(secrets.get(0), "password"));
    }
  }

  @Test
  void anExistingSecretReplacesTheGeneratedOne() throws Exception {
    Rendered chart =
        Helm.template("--set", "store.postgresql.enabled=true,store.existingSecret=my-store");
    assertThat(chart.ofKind("Secret")).isEmpty();
    JsonNode env =
        chart
            .get("StatefulSet", FULLNAME + "-postgresql")
            .at("/spec/template/spec/containers/0/env");
    assertThat(env.findValuesAsText("name")).contains("POSTGRES_USER", "POSTGRES_PASSWORD");
    assertThat(env.findValues("secretKeyRef"))
        .allSatisfy(ref -> assertThat(ref.get("name").asText()).isEqualTo("my-store"));
  }

  /** The common values users look for (issue 21 §1; docs/install.md, "Chart values"). */
  @Test
  void nameOverrideRenamesTheObjectsButNotTheLabelFleetsAdmitTheOperatorBy() throws Exception {
    Rendered chart = Helm.template("--set", "nameOverride=ops");
    String name = Helm.RELEASE + "-ops";
    JsonNode deployment = chart.get("Deployment", name);
    assertThat(chart.get("ServiceAccount", name)).isNotNull();
    assertThat(chart.get("Service", name + "-metrics")).isNotNull();
    assertThat(deployment.at("/spec/template/spec/serviceAccountName").asText()).isEqualTo(name);
    assertThat(deployment.at("/spec/template/metadata/labels/app.kubernetes.io~1name").asText())
        .isEqualTo("pallas-operator");
    assertThat(chart.ofKind("Deployment")).hasSize(1);

    Rendered full = Helm.template("--set", "fullnameOverride=pallas-ops");
    assertThat(full.get("Deployment", "pallas-ops")).isNotNull();
    assertThat(full.get("ClusterRoleBinding", "pallas-ops")).isNotNull();
  }

  @Test
  void podLabelsAndAnnotationsReachThePodButNotTheSelector() throws Exception {
    JsonNode deployment =
        Helm.template("--set", "podLabels.team=ml,podAnnotations.example\\.com/owner=ml-team")
            .get("Deployment", FULLNAME);
    JsonNode meta = deployment.at("/spec/template/metadata");
    assertThat(meta.at("/labels/team").asText()).isEqualTo("ml");
    assertThat(meta.at("/labels/app.kubernetes.io~1name").asText()).isEqualTo("pallas-operator");
    assertThat(meta.at("/annotations/example.com~1owner").asText()).isEqualTo("ml-team");
    assertThat(deployment.at("/spec/selector/matchLabels").has("team")).isFalse();
  }

  /** Helm merges a map value into the default: a key set adds or changes, a key set null goes. */
  @Test
  void securityContextsTakeOverridesAndNullDropsADefault() throws Exception {
    JsonNode pod =
        Helm.template(
                "--set",
                "podSecurityContext.runAsUser=1000,podSecurityContext.fsGroup=0,"
                    + "securityContext.runAsNonRoot=null,securityContext.privileged=false")
            .get("Deployment", FULLNAME)
            .at("/spec/template/spec");
    assertThat(pod.at("/securityContext/runAsUser").asInt()).isEqualTo(1000);
    assertThat(pod.at("/securityContext/fsGroup").asInt(-1)).isZero();
    assertThat(pod.at("/securityContext/runAsNonRoot").asBoolean()).isTrue();
    assertThat(pod.at("/securityContext/seccompProfile/type").asText()).isEqualTo("RuntimeDefault");
    JsonNode container = pod.at("/containers/0/securityContext");
    assertThat(container.has("runAsNonRoot")).isFalse();
    assertThat(container.at("/privileged").asBoolean(true)).isFalse();
    assertThat(container.at("/readOnlyRootFilesystem").asBoolean()).isTrue();
    // by default no user or group: the image's runs the pod, or the platform's (OpenShift)
    JsonNode defaults = Helm.template().get("Deployment", FULLNAME).at("/spec/template/spec");
    assertThat(defaults.at("/securityContext").has("runAsUser")).isFalse();
    assertThat(defaults.at("/securityContext").has("runAsGroup")).isFalse();
    assertThat(defaults.at("/securityContext/runAsNonRoot").asBoolean()).isTrue();
    assertThat(defaults.at("/containers/0/securityContext/runAsNonRoot").asBoolean()).isTrue();
  }

  /**
   * docs/install.md, "OpenShift": where the API server serves security.openshift.io/v1, no pod of
   * the chart fixes a user, group or fsGroup (restricted-v2 assigns them), whatever the values say,
   * unless adaptSecurityContext is disabled; force does it anywhere.
   */
  @Test
  void onOpenShiftThePodsLeaveTheirIdsToTheScc() throws Exception {
    String values =
        "store.postgresql.enabled=true,podSecurityContext.runAsUser=1000,"
            + "securityContext.runAsUser=1000";
    String openshift = "security.openshift.io/v1";
    for (Rendered chart :
        List.of(
            Helm.template("--api-versions", openshift, "--set", values),
            Helm.template(
                "--set", values + ",compatibility.openshift.adaptSecurityContext=force"))) {
      for (JsonNode pod :
          List.of(
              chart.get("Deployment", FULLNAME).at("/spec/template/spec"),
              chart.get("StatefulSet", FULLNAME + "-postgresql").at("/spec/template/spec"))) {
        for (String id : List.of("runAsUser", "runAsGroup", "fsGroup")) {
          assertThat(pod.at("/securityContext").has(id)).as(id).isFalse();
          assertThat(pod.at("/containers/0/securityContext").has(id)).as(id).isFalse();
        }
        assertThat(pod.at("/securityContext/runAsNonRoot").asBoolean()).isTrue();
        assertThat(pod.at("/securityContext/seccompProfile/type").asText())
            .isEqualTo("RuntimeDefault");
      }
    }
    JsonNode kept =
        Helm.template(
                "--api-versions",
                openshift,
                "--set",
                values + ",compatibility.openshift.adaptSecurityContext=disabled")
            .get("StatefulSet", FULLNAME + "-postgresql")
            .at("/spec/template/spec/securityContext");
    assertThat(kept.at("/runAsUser").asInt()).isEqualTo(999);
    assertThat(kept.at("/fsGroup").asInt()).isEqualTo(999);
  }

  @Test
  void theOperatorsOwnSchedulingAndResourcesReachItsPod() throws Exception {
    JsonNode pod =
        Helm.template(
                "--set",
                "nodeSelector.pool=ops,priorityClassName=system-cluster-critical,"
                    + "resources.limits.memory=1Gi",
                "--set-json",
                "tolerations=[{\"key\":\"dedicated\",\"operator\":\"Exists\"}]",
                "--set-json",
                "affinity={\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
                    + "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"arch\","
                    + "\"operator\":\"In\",\"values\":[\"arm64\"]}]}]}}}",
                "--set-json",
                "topologySpreadConstraints=[{\"maxSkew\":1,\"topologyKey\":"
                    + "\"topology.kubernetes.io/zone\",\"whenUnsatisfiable\":"
                    + "\"ScheduleAnyway\"}]")
            .get("Deployment", FULLNAME)
            .at("/spec/template/spec");
    assertThat(pod.at("/nodeSelector/pool").asText()).isEqualTo("ops");
    assertThat(pod.at("/priorityClassName").asText()).isEqualTo("system-cluster-critical");
    assertThat(pod.at("/tolerations/0/key").asText()).isEqualTo("dedicated");
    assertThat(
            pod.at(
                    "/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution"
                        + "/nodeSelectorTerms/0/matchExpressions/0/values/0")
                .asText())
        .isEqualTo("arm64");
    assertThat(pod.at("/topologySpreadConstraints/0/topologyKey").asText())
        .isEqualTo("topology.kubernetes.io/zone");
    assertThat(pod.at("/containers/0/resources/limits/memory").asText()).isEqualTo("1Gi");
    JsonNode defaults = Helm.template().get("Deployment", FULLNAME).at("/spec/template/spec");
    assertThat(defaults.has("topologySpreadConstraints")).isFalse();
    assertThat(defaults.has("nodeSelector")).isFalse();
  }

  @Test
  void extraObjectsAreInstalledWithTheReleaseTemplatesRendered() throws Exception {
    Rendered chart =
        Helm.template(
            "--set-json",
            "extraObjects=[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
                + "{\"name\":\"extra\",\"namespace\":\"{{ .Release.Namespace }}\"},"
                + "\"data\":{\"a\":\"b\"}},"
                + "\"apiVersion: scheduling.k8s.io/v1\\nkind: PriorityClass\\nmetadata:\\n"
                + "  name: {{ .Release.Name }}-agents\\nvalue: 1000\\n\"]");
    JsonNode config = chart.get("ConfigMap", "extra");
    assertThat(config.at("/metadata/namespace").asText()).isEqualTo(Helm.NAMESPACE);
    assertThat(config.at("/data/a").asText()).isEqualTo("b");
    assertThat(chart.get("PriorityClass", Helm.RELEASE + "-agents").at("/value").asInt())
        .isEqualTo(1000);
    assertThat(Helm.template().ofKind("ConfigMap")).isEmpty();
  }

  private static String decode(JsonNode secret, String key) {
    return new String(
        java.util.Base64.getDecoder().decode(secret.at("/data/" + key).asText()),
        java.nio.charset.StandardCharsets.UTF_8);
  }

  @Test
  void theSchemaRefusesAnUnknownKeyAndAWrongType() throws Exception {
    Helm.Result typo = Helm.run(Helm.templateArgs("--set", "watchNamespace={ai}"));
    assertThat(typo.exitCode()).isNotZero();
    assertThat(typo.output())
        .contains("values don't meet the specifications of the schema")
        .contains("watchNamespace");
    Helm.Result type = Helm.run(Helm.templateArgs("--set", "replicaCount=two"));
    assertThat(type.exitCode()).isNotZero();
    assertThat(type.output()).contains("replicaCount");
    Helm.Result digest = Helm.run(Helm.templateArgs("--set", "image.digest=latest"));
    assertThat(digest.exitCode()).isNotZero();
    assertThat(digest.output()).contains("digest");
  }

  private static final YAMLMapper YAML = new YAMLMapper();
  private static final Set<String> WRITE =
      Set.of("get", "list", "watch", "create", "update", "patch", "delete");

  /** apiGroup/resource -> verbs of a (Cluster)Role. */
  static Map<String, Set<String>> rules(JsonNode role) {
    Map<String, Set<String>> out = new TreeMap<>();
    for (JsonNode rule : role.get("rules")) {
      for (JsonNode group : rule.get("apiGroups")) {
        for (JsonNode resource : rule.get("resources")) {
          Set<String> verbs = new TreeSet<>();
          rule.get("verbs").forEach(v -> verbs.add(v.asText()));
          out.merge(
              group.asText() + "/" + resource.asText(),
              verbs,
              (a, b) -> {
                Set<String> both = new TreeSet<>(a);
                both.addAll(b);
                return both;
              });
        }
      }
    }
    return out;
  }

  private static Map<String, String> env(JsonNode container) {
    Map<String, String> env = new TreeMap<>();
    container.get("env").forEach(e -> env.put(e.get("name").asText(), e.path("value").asText()));
    return env;
  }

  /** The images' tag: pallas.image.tag in the parent pom. */
  private static String imageTag() throws Exception {
    Matcher m =
        Pattern.compile("<pallas.image.tag>([^<]+)</pallas.image.tag>")
            .matcher(Files.readString(Path.of("..", "pom.xml")));
    assertThat(m.find()).isTrue();
    return m.group(1);
  }
}
