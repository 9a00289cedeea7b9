package ca.helu.pallas.operator;

import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasDeploymentStatus;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.api.StoreSpec;
import ca.helu.pallas.api.validation.DeploymentValidator;
import ca.helu.pallas.operator.dependent.AgentAutoscalersDependentResource;
import ca.helu.pallas.operator.dependent.AgentDeploymentsDependentResource;
import ca.helu.pallas.operator.dependent.AgentDisruptionBudgetsDependentResource;
import ca.helu.pallas.operator.dependent.AgentServiceAccountsDependentResource;
import ca.helu.pallas.operator.dependent.AgentServicesDependentResource;
import ca.helu.pallas.operator.dependent.ConfigMapDependentResource;
import ca.helu.pallas.operator.dependent.Fleets;
import ca.helu.pallas.operator.dependent.InlineSecretDependentResource;
import ca.helu.pallas.operator.dependent.NetworkPolicyDependentResource;
import ca.helu.pallas.operator.dependent.RegistryAccess;
import ca.helu.pallas.operator.dependent.RegistryDeploymentDependentResource;
import ca.helu.pallas.operator.dependent.RegistryServiceDependentResource;
import ca.helu.pallas.operator.dependent.ServiceMonitorDependentResource;
import ca.helu.pallas.operator.render.FleetRenderer;
import ca.helu.pallas.operator.render.RenderedFleet;
import ca.helu.pallas.operator.render.StartGate;
import ca.helu.pallas.operator.source.ReferencedSecrets;
import ca.helu.pallas.operator.source.ServiceMonitorCrd;
import ca.helu.pallas.operator.status.Observation;
import ca.helu.pallas.operator.status.Reason;
import ca.helu.pallas.operator.status.StatusAggregator;
import ca.helu.pallas.operator.verify.AgentVerifier;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.MaxReconciliationInterval;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.Workflow;
import io.javaoperatorsdk.operator.api.reconciler.dependent.Dependent;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.retry.GradualRetry;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns a PallasDeployment into its fleet (docs/operator.md). It validates what the API server's
 * CEL rules cannot (dependency cycles, missing Secrets): an invalid resource changes nothing that
 * runs and says why in its status and a Warning event. A valid one is rendered once, handed to the
 * dependents, and the status is rebuilt from what the cache shows; it is written only when it
 * changed.
 */
@Workflow(
    explicitInvocation = true,
    dependents = {
      @Dependent(name = "config", type = ConfigMapDependentResource.class),
      @Dependent(
          name = "inline-secret",
          type = InlineSecretDependentResource.class,
          reconcilePrecondition = InlineSecretDependentResource.HasInlineSecrets.class),
      @Dependent(name = "agent-services", type = AgentServicesDependentResource.class),
      @Dependent(
          name = "agent-service-accounts",
          type = AgentServiceAccountsDependentResource.class),
      // a pod of a ServiceAccount that does not exist yet is refused: the accounts first
      @Dependent(
          name = "agent-deployments",
          type = AgentDeploymentsDependentResource.class,
          dependsOn = "agent-service-accounts"),
      @Dependent(
          name = "agent-autoscalers",
          type = AgentAutoscalersDependentResource.class,
          dependsOn = "agent-deployments"),
      @Dependent(
          name = "agent-disruption-budgets",
          type = AgentDisruptionBudgetsDependentResource.class),
      @Dependent(name = "network-policy", type = NetworkPolicyDependentResource.class),
      @Dependent(name = "registry-account", type = RegistryAccess.ServiceAccountDependent.class),
      @Dependent(name = "registry-role", type = RegistryAccess.RoleDependent.class),
      // the API server refuses to bind a Role it cannot resolve yet unless the caller may `bind`
      // (an operator under the chart's RBAC may not): the Role first
      @Dependent(
          name = "registry-role-binding",
          type = RegistryAccess.RoleBindingDependent.class,
          dependsOn = "registry-role"),
      @Dependent(name = "registry-service", type = RegistryServiceDependentResource.class),
      @Dependent(name = "registry-deployment", type = RegistryDeploymentDependentResource.class),
      @Dependent(
          name = "service-monitor",
          type = ServiceMonitorDependentResource.class,
          activationCondition = ServiceMonitorDependentResource.CrdInstalled.class,
          reconcilePrecondition = ServiceMonitorDependentResource.Enabled.class)
    })
@ControllerConfiguration(
    name = "pallasdeployment",
    // a periodic check as a safety net; at steady state it writes nothing
    maxReconciliationInterval =
        @MaxReconciliationInterval(interval = 10, timeUnit = TimeUnit.MINUTES))
// a refused object is retried for as long as it is refused, backing off to every 5 minutes
@GradualRetry(
    maxAttempts = -1,
    initialInterval = 2000,
    intervalMultiplier = 2,
    maxInterval = 300_000)
public class PallasDeploymentReconciler implements Reconciler<PallasDeployment> {
  private static final Logger LOG = LoggerFactory.getLogger(PallasDeploymentReconciler.class);

  private final OperatorConfig config;
  private final Events events;
  private final Clock clock;
  // null when agents are not asked (PALLAS_VERIFY_INTERVAL_SECONDS=0)
  private final AgentVerifier verifier;

  public PallasDeploymentReconciler(
      OperatorConfig config, Events events, Clock clock, AgentVerifier verifier) {
    this.config = config;
    this.events = events;
    this.clock = clock;
    this.verifier = verifier;
  }

  @Override
  public List<EventSource<?, PallasDeployment>> prepareEventSources(
      EventSourceContext<PallasDeployment> context) {
    List<EventSource<?, PallasDeployment>> sources = new ArrayList<>();
    sources.add(ReferencedSecrets.eventSource(context, config.defaultStoreSecret()));
    sources.add(ServiceMonitorCrd.eventSource(context));
    if (verifier != null) {
      sources.add(verifier.eventSource());
    }
    return sources;
  }

  @Override
  public UpdateControl<PallasDeployment> reconcile(
      PallasDeployment primary, Context<PallasDeployment> context) {
    List<String> invalid = DeploymentValidator.validate(primary);
    RenderedFleet fleet =
        invalid.isEmpty()
            ? FleetRenderer.render(
                primary, ReferencedSecrets.digests(primary, context), config.defaultStoreSecret())
            : null;
    List<String> missing = fleet == null ? List.of() : fleet.missingSecrets();
    StartGate gate = null;
    if (fleet != null && missing.isEmpty()) {
      gate = StartGate.of(fleet, agentDeployments(primary, context));
      Fleets.share(context, config, fleet, gate);
      context.managedWorkflowAndDependentResourceContext().reconcileManagedWorkflow();
    }
    return status(primary, context, invalid, missing, null, gate);
  }

  @Override
  public ErrorStatusUpdateControl<PallasDeployment> updateErrorStatus(
      PallasDeployment primary, Context<PallasDeployment> context, Exception e) {
    if (Failures.causedByInterrupt(e)) {
      // the operator is stopping: nothing failed, the next leader reconciles again
      return ErrorStatusUpdateControl.noStatusUpdate();
    }
    String failure = "cannot apply the spec: " + Failures.describe(e);
    LOG.warn("reconcile failed: {}", failure);
    UpdateControl<PallasDeployment> update =
        status(primary, context, List.of(), List.of(), failure, null);
    return update.isNoUpdate()
        ? ErrorStatusUpdateControl.noStatusUpdate()
        : ErrorStatusUpdateControl.patchStatus(update.getResource().orElseThrow());
  }

  private UpdateControl<PallasDeployment> status(
      PallasDeployment primary,
      Context<PallasDeployment> context,
      List<String> invalid,
      List<String> missing,
      String failure,
      StartGate gate) {
    Map<String, Deployment> agents = agentDeployments(primary, context);
    Observation observation =
        new Observation(
            invalid,
            missing,
            failure,
            agents,
            registryDeployment(context).orElse(null),
            gate,
            ServiceMonitorCrd.wanted(primary),
            ServiceMonitorCrd.installed(context),
            verifier == null ? null : verifier.observe(primary, agents),
            storeOf(primary, context));
    PallasDeploymentStatus next = StatusAggregator.aggregate(primary, observation, clock.instant());
    if (next.equals(primary.getStatus())) {
      return UpdateControl.noUpdate();
    }
    Condition ready = ready(next);
    LOG.info("status: Ready={} {}: {}", ready.getStatus(), ready.getReason(), ready.getMessage());
    warnOnNewProblem(primary, next);
    warnWhenCallersBecomeUnauthenticated(primary, next);
    PallasDeployment patch =
        new PallasDeployment(
            new ObjectMetaBuilder()
                .withName(primary.getMetadata().getName())
                .withNamespace(primary.getMetadata().getNamespace())
                .build(),
            null);
    patch.setStatus(next);
    return UpdateControl.patchStatus(patch);
  }

  /** The Secret of the store the fleet's agents use, or null (in memory). */
  private String storeOf(PallasDeployment primary, Context<PallasDeployment> context) {
    if (primary.getSpec() == null) {
      return null;
    }
    StoreSpec store =
        FleetRenderer.storeOf(
            primary.getSpec(),
            ReferencedSecrets.digests(primary, context),
            config.defaultStoreSecret());
    return store == null ? null : store.secretName();
  }

  /** One Warning event when Ready turns to a problem (not on every reconcile). */
  private void warnOnNewProblem(PallasDeployment primary, PallasDeploymentStatus next) {
    Condition now = ready(next);
    if (now == null || "True".equals(now.getStatus())) {
      return;
    }
    String reason = now.getReason();
    boolean problem =
        Reason.InvalidSpec.name().equals(reason)
            || Reason.SecretMissing.name().equals(reason)
            || Reason.ReconcileFailed.name().equals(reason);
    Condition before = ready(primary.getStatus());
    if (problem
        && (before == null
            || !Objects.equals(before.getReason(), reason)
            || !Objects.equals(before.getMessage(), now.getMessage()))) {
      events.warning(primary, reason, now.getMessage());
    }
  }

  /** One Warning event when a fleet starts (or goes on) without inbound authentication. */
  private void warnWhenCallersBecomeUnauthenticated(
      PallasDeployment primary, PallasDeploymentStatus next) {
    Condition now = condition(next, StatusAggregator.CALLERS_AUTHENTICATED);
    Condition before = condition(primary.getStatus(), StatusAggregator.CALLERS_AUTHENTICATED);
    if (now != null
        && "False".equals(now.getStatus())
        && (before == null || !"False".equals(before.getStatus()))) {
      events.warning(primary, now.getReason(), now.getMessage());
    }
  }

  private static Condition ready(PallasDeploymentStatus status) {
    return condition(status, StatusAggregator.READY);
  }

  private static Condition condition(PallasDeploymentStatus status, String type) {
    if (status == null || status.conditions() == null) {
      return null;
    }
    return status.conditions().stream()
        .filter(c -> type.equals(c.getType()))
        .findFirst()
        .orElse(null);
  }

  /**
   * The Deployment of each agent's pods as the cache has it, by agent name: the agent's own {@code
   * X-a}, or its pod group's {@code X-g}, which several agents share (docs/operator.md, "Agents
   * sharing a pod").
   */
  private static Map<String, Deployment> agentDeployments(
      PallasDeployment primary, Context<PallasDeployment> context) {
    Map<String, Deployment> byName =
        context
            .getSecondaryResourcesAsStream(Deployment.class)
            .filter(d -> PallasNames.COMPONENT_AGENT.equals(label(d, PallasNames.LABEL_COMPONENT)))
            .collect(Collectors.toMap(d -> d.getMetadata().getName(), d -> d, (a, b) -> a));
    Map<String, Deployment> byAgent = new LinkedHashMap<>();
    for (AgentSpec agent : primary.getSpec().effectiveAgents()) {
      if (agent == null || agent.name() == null) {
        continue;
      }
      Deployment d =
          byName.get(PallasNames.agentObject(primary.name(), primary.getSpec().podNameOf(agent)));
      if (d != null) {
        byAgent.put(agent.name(), d);
      }
    }
    return byAgent;
  }

  private static Optional<Deployment> registryDeployment(Context<PallasDeployment> context) {
    return context
        .getSecondaryResourcesAsStream(Deployment.class)
        .filter(d -> PallasNames.COMPONENT_REGISTRY.equals(label(d, PallasNames.LABEL_COMPONENT)))
        .findFirst();
  }

  private static String label(Deployment d, String key) {
    return d.getMetadata().getLabels() == null ? null : d.getMetadata().getLabels().get(key);
  }
}
