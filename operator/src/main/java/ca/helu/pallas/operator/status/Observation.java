package ca.helu.pallas.operator.status;

import ca.helu.pallas.operator.render.StartGate;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.List;
import java.util.Map;

/**
 * What the operator saw in one reconcile, the input of {@link StatusAggregator}.
 *
 * @param invalid problems of the spec the API server could not check (empty when valid)
 * @param missingSecrets referenced Secrets or keys that do not exist
 * @param failure why applying the spec failed, or null
 * @param agents the agents' Deployments by agent name
 * @param registry the registry's Deployment, or null
 * @param gate which agents wait for which (null when nothing was applied)
 * @param serviceMonitorWanted the spec asks for a ServiceMonitor
 * @param serviceMonitorCrdInstalled the ServiceMonitor CRD exists
 * @param verifications each agent's MCP handshake by agent name, or null when agents are not asked
 * @param store the Secret of the store the agents keep their conversations in, or null: memory
 */
public record Observation(
    List<String> invalid,
    List<String> missingSecrets,
    String failure,
    Map<String, Deployment> agents,
    Deployment registry,
    StartGate gate,
    boolean serviceMonitorWanted,
    boolean serviceMonitorCrdInstalled,
    Map<String, Verification> verifications,
    String store) {}
