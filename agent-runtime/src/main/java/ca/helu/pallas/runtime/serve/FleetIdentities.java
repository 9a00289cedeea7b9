package ca.helu.pallas.runtime.serve;

import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.runtime.auth.AgentTokens;
import ca.helu.pallas.runtime.auth.LocalAgentKeys;
import ca.helu.pallas.runtime.auth.ProjectedTokens;
import ca.helu.pallas.runtime.auth.ServiceAccountTokens;
import ca.helu.pallas.runtime.downstream.Credentials;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How the agents of this process prove who they are to the agents of their fleet they call, and
 * recognise those that call them (docs/runtime.md, "Agents calling agents"), when the fleet has
 * inbound authentication: in one process, keys made at start ({@link LocalAgentKeys}); in an agent
 * pod, ServiceAccount tokens the kubelet projects ({@link ProjectedTokens}) checked against the API
 * server's issuer ({@link ServiceAccountTokens}). Without inbound authentication, nothing.
 */
final class FleetIdentities {
  private static final Logger LOG = LoggerFactory.getLogger(FleetIdentities.class);
  private static final Duration API_TIMEOUT = Duration.ofSeconds(5);

  private final PallasDeployment deployment;
  private final LocalAgentKeys local;
  private final PodIdentity pod;
  private final ProjectedTokens projected;

  private FleetIdentities(PallasDeployment deployment, LocalAgentKeys local, PodIdentity pod) {
    this.deployment = deployment;
    this.local = local;
    this.pod = pod;
    this.projected = pod == null ? null : new ProjectedTokens(pod.dir());
  }

  static FleetIdentities of(PallasDeployment deployment, ServeOptions options) {
    if (deployment.getSpec().auth() == null) {
      return new FleetIdentities(deployment, null, null);
    }
    if (options.cluster() && options.podIdentity() != null) {
      return new FleetIdentities(deployment, null, options.podIdentity());
    }
    if (options.onlyAgents().isEmpty()) {
      return new FleetIdentities(
          deployment,
          new LocalAgentKeys(
              deployment.getSpec().effectiveAgents().stream().map(AgentSpec::name).toList()),
          null);
    }
    return new FleetIdentities(deployment, null, null);
  }

  /** What {@code caller}'s requests to {@code peer} carry. */
  Credentials credentials(AgentSpec caller, AgentSpec peer) {
    if (local != null) {
      String key = local.keyOf(caller.name());
      return Credentials.peer(caller.name(), () -> Optional.of(key));
    }
    if (projected != null) {
      return Credentials.peer(caller.name(), () -> projected.tokenFor(peer.name()));
    }
    if (deployment.getSpec().auth() != null) {
      LOG.warn(
          "agent {}: calls agent {} without an identity of its own (serve --agent outside a pod"
              + " of the operator's), which refuses them",
          caller.name(),
          peer.name());
    }
    return Credentials.NONE;
  }

  /**
   * What the registry of this process presents to {@code agent}: its key, in one process; nothing
   * otherwise (the registry pod has its own, RegistryCommand).
   */
  Credentials registryCredentials(String agent) {
    if (local == null) {
      return Credentials.NONE;
    }
    String key = local.registryKey();
    return Credentials.peer(null, () -> Optional.of(key));
  }

  /**
   * The identities {@code callee} accepts: those of the agents that list it among their servers,
   * the registry's, and in a pod the operator's; null when none can be checked here.
   *
   * @param resource the callee's resource identifier, the audience of the tokens it accepts
   */
  AgentTokens acceptedBy(AgentSpec callee, String resource) {
    Set<AgentSpec> callers =
        deployment.getSpec().effectiveAgents().stream()
            .filter(a -> a.effectiveServers().contains(callee.name()))
            .collect(Collectors.toSet());
    if (local != null) {
      return local.acceptedBy(callers.stream().map(AgentSpec::name).collect(Collectors.toSet()));
    }
    if (pod == null) {
      return null;
    }
    String namespace = PallasNames.namespaceOf(deployment);
    // agents that share a ServiceAccount (a pod group's, or the user's) share its subject
    Map<String, Set<String>> agents = new LinkedHashMap<>();
    for (AgentSpec a : callers) {
      agents
          .computeIfAbsent(
              PallasNames.serviceAccountSubject(
                  namespace, PallasNames.serviceAccountOf(deployment, a)),
              s -> new TreeSet<>())
          .add(a.name());
    }
    Map<String, AgentTokens.Identity> subjects = new LinkedHashMap<>();
    agents.forEach((subject, names) -> subjects.put(subject, new AgentTokens.Identity(names)));
    // the fleet's registry pod (its ServiceAccount, RegistryAccess in the operator) follows every
    // agent's resources; the operator verifies each agent
    subjects.put(
        PallasNames.serviceAccountSubject(namespace, PallasNames.registryObject(deployment.name())),
        AgentTokens.Identity.OBSERVER);
    if (pod.operatorSubject() != null) {
      subjects.put(pod.operatorSubject(), AgentTokens.Identity.OBSERVER);
    }
    return new ServiceAccountTokens(pod.api(), resource, subjects, API_TIMEOUT);
  }
}
