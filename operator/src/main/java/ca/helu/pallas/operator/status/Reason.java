package ca.helu.pallas.operator.status;

/** Every reason a condition of a PallasDeployment can give (docs/status.md). */
public enum Reason {
  /** Ready=True: every agent has its replicas ready and the registry serves. */
  AllAgentsReady,
  /** Ready=False: some agent has fewer ready pods than it wants. */
  AgentsNotReady,
  /** Ready=False: the registry pod is not ready. */
  RegistryNotReady,
  /** Ready=False, Progressing=True: an agent waits for the agents it depends on. */
  WaitingForDependencies,
  /** Progressing=True: a Deployment is rolling out. */
  RollingOut,
  /** Progressing=False: every Deployment has converged on the spec. */
  Converged,
  /** Ready, Progressing, Degraded: the spec breaks a rule the API server cannot check. */
  InvalidSpec,
  /** Ready, Progressing, Degraded: a referenced Secret or key does not exist. */
  SecretMissing,
  /** Degraded=True: an agent's pods fail to start or its rollout passed its deadline. */
  AgentsFailing,
  /** Degraded=True: a ServiceMonitor was asked for but its CRD is not installed. */
  ServiceMonitorSkipped,
  /** Ready=False, Degraded=True: the operator could not apply the spec (see the message). */
  ReconcileFailed,
  /** Degraded=False. */
  AsExpected,
  /** Verified=True: every agent's MCP endpoint answered initialize and tools/list. */
  AllAgentsVerified,
  /** Verified=False: some agent did not answer; the message names each and why. */
  AgentsNotVerified,
  /** Verified=Unknown: some agent was not asked yet, and none failed. */
  Verifying,
  /** An agent's Verified=True: it answered initialize and tools/list. */
  HandshakeSucceeded,
  /** An agent's Verified=False: its initialize failed (unreachable, timeout, an error). */
  InitializeFailed,
  /** An agent's Verified=False: it answered initialize, but its tools/list failed. */
  ToolsListFailed,
  /** An agent's Verified=False: it has no ready pod to ask. */
  NoReadyPod,
  /** An agent's Verified=Unknown: its handshake is on its way. */
  Pending,
  /** CallersAuthenticated=True: every agent asks for an OIDC issuer's bearer token. */
  OidcTokens,
  /** CallersAuthenticated=True: every agent asks for one of the static tokens of a Secret. */
  StaticTokens,
  /** CallersAuthenticated=False: anyone who reaches an agent's port may call it. */
  NoInboundAuth,
  /** ConversationsDurable=True: the agents keep conversations in a store's PostgreSQL. */
  StoreConfigured,
  /** ConversationsDurable=False: each agent pod keeps its conversations in memory. */
  InMemory
}
