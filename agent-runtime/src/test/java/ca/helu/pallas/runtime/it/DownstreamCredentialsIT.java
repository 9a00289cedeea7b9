package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.runtime.auth.Caller;
import ca.helu.pallas.runtime.auth.OidcTokens;
import ca.helu.pallas.runtime.testing.KeycloakServer;
import ca.helu.pallas.runtime.testing.LogCapture;
import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import ca.helu.pallas.runtime.testing.TestMcpServer;
import ch.qos.logback.classic.spi.ILoggingEvent;
import com.nimbusds.jwt.SignedJWT;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Each downstream server's credential by choice, with a real issuer (issue 18 §3; docs/runtime.md,
 * "Downstream credentials"): Keycloak exchanges each caller's token for one meant for the server
 * that asks for token exchange, which sees the caller through the agents' client; the server that
 * asks for forwarding gets the caller's own token; the one with a credential of its own gets that;
 * the one that asks for nothing gets nothing; and an agent calling another carries its caller, not
 * the caller's token. All of it for 100 callers with distinct identities at once: no token reaches
 * a server that did not ask for it, none crosses callers.
 */
class DownstreamCredentialsIT {
  private static final int CALLERS = 100;
  private static final String AGENTS_AUDIENCE = "https://agents.pallas.test/helper";

  @RegisterExtension static final KeycloakServer KEYCLOAK = new KeycloakServer().withUsers(CALLERS);

  private static TestMcpServer fwd;
  private static TestMcpServer xchg;
  private static TestMcpServer open;
  private static TestMcpServer own;
  private static RunningFleet fleet;
  private static OidcTokens asToolsSeesIt;

  @BeforeAll
  static void start() {
    fwd = TestMcpServer.start();
    xchg = TestMcpServer.start();
    open = TestMcpServer.start();
    own = TestMcpServer.start();
    fleet =
        RunningFleet.start(
            """
            apiVersion: pallas.helu.ca/v1alpha1
            kind: PallasDeployment
            metadata: {name: credentials}
            spec:
              host: 127.0.0.1
              registry: {port: ${port:registry}}
              defaultModel: passthrough
              auth:
                oidc:
                  issuerUrl: "%s"
                  audience: "%s"
                  allowForwarding: true
                  client: {id: agent-helper, secret: {env: AGENTS_CLIENT_SECRET}}
              mcpServers:
                - {name: fwd, url: "%s", forwardInboundAuth: true}
                - name: xchg
                  url: "%s"
                  tokenExchange: {audience: tools, scopes: [tools]}
                - {name: open, url: "%s"}
                - name: own
                  url: "%s"
                  headers: [{name: Authorization, valueFrom: {env: OWN_TOKEN}}]
              agents:
                - name: worker
                  port: ${port:worker}
                  servers: [fwd, xchg, open, own]
                  instanceScope: request
                - {name: lead, port: ${port:lead}, servers: [worker], instanceScope: request}
            """
                .formatted(
                    KEYCLOAK.issuer(),
                    AGENTS_AUDIENCE,
                    fwd.url(),
                    xchg.url(),
                    open.url(),
                    own.url()),
            Map.of("AGENTS_CLIENT_SECRET", "agent-helper-secret", "OWN_TOKEN", "Bearer own"));
    asToolsSeesIt =
        new OidcTokens(KEYCLOAK.issuer(), "tools", Set.of("tools"), Duration.ofSeconds(5));
  }

  @AfterAll
  static void stop() {
    fleet.close();
    for (TestMcpServer s : List.of(fwd, xchg, open, own)) {
      s.close();
    }
  }

  private static String call(RawMcp mcp, String message) throws Exception {
    return RawMcp.text(mcp.callTool("send_message", Map.of("message", message)));
  }

  private static String subject(String token) throws Exception {
    return SignedJWT.parse(token).getJWTClaimsSet().getSubject();
  }

  @Test
  void theExchangeServerSeesTheCallerThroughTheAgentsClientWithATokenReused() throws Exception {
    String alice = KEYCLOAK.userToken("daedalus", "daedalus-secret", "alice", "alice-password");
    RawMcp worker = RawMcp.open(fleet.mcpUrl("worker"), alice);
    String seen = call(worker, "***CALL_TOOL xchg__whoami");
    assertThat(seen).startsWith("Bearer ");
    String exchanged = seen.substring("Bearer ".length());
    assertThat(exchanged).isNotEqualTo(alice);
    Caller asTools = asToolsSeesIt.authenticate(seen);
    assertThat(asTools.name()).as("alice, through the agents' client").isEqualTo(subject(alice));
    assertThat(asTools.client()).isEqualTo("agent-helper");
    assertThat(call(worker, "***CALL_TOOL xchg__whoami"))
        .as("the exchanged token is reused while it is fresh")
        .isEqualTo(seen);
  }

  /**
   * The registry's call_tool asks for the exchange as an agent does (docs/runtime.md, "The
   * registry's MCP endpoint"): the server sees the caller through the agents' client, and never the
   * caller's own token.
   */
  @Test
  void throughTheRegistryTheExchangeServerSeesTheCallerToo() throws Exception {
    String bob =
        KEYCLOAK.userToken(
            "daedalus", "daedalus-secret", KeycloakServer.user(0), KeycloakServer.password(0));
    RawMcp registry = RawMcp.open(fleet.registryBase() + "/mcp", bob);
    // the registry indexes xchg's tools once an agent has probed it
    String seen =
        await()
            .atMost(Duration.ofSeconds(30))
            .until(
                () -> RawMcp.text(registry.callTool("call_tool", Map.of("name", "xchg/whoami"))),
                text -> text.startsWith("Bearer "));
    assertThat(seen).doesNotContain(bob);
    Caller asTools = asToolsSeesIt.authenticate(seen);
    assertThat(asTools.name()).as("bob, through the agents' client").isEqualTo(subject(bob));
    assertThat(asTools.client()).isEqualTo("agent-helper");
  }

  @Test
  void aHundredCallersWithDistinctIdentitiesEachSeeTheirOwnCredentialsOnly() throws Exception {
    List<String> tokens = new ArrayList<>();
    for (int i = 0; i < CALLERS; i++) {
      tokens.add(
          KEYCLOAK.userToken(
              "daedalus", "daedalus-secret", KeycloakServer.user(i), KeycloakServer.password(i)));
    }
    List<String> subjects = new ArrayList<>();
    for (String t : tokens) {
      subjects.add(subject(t));
    }
    assertThat(Set.copyOf(subjects)).hasSize(CALLERS);
    int fwdBefore = fwd.authorizations().size();
    int xchgBefore = xchg.authorizations().size();
    int openBefore = open.authorizations().size();
    int ownBefore = own.authorizations().size();
    try (LogCapture log = new LogCapture();
        ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<String[]>> results = new ArrayList<>();
      for (String token : tokens) {
        results.add(
            pool.submit(() -> {
              RawMcp worker = RawMcp.open(fleet.mcpUrl("worker"), token);
              RawMcp lead = RawMcp.open(fleet.mcpUrl("lead"), token);
              return new String[] {
                call(worker, "***CALL_TOOL fwd__whoami"),
                call(worker, "***CALL_TOOL xchg__whoami"),
                call(worker, "***CALL_TOOL open__whoami"),
                call(worker, "***CALL_TOOL own__whoami"),
                call(
                    lead, "***CALL_TOOL worker__worker {\"message\": \"***CALL_TOOL fwd__whoami\"}")
              };
            }));
      }
      for (int i = 0; i < CALLERS; i++) {
        String[] seen = results.get(i).get();
        String who = KeycloakServer.user(i);
        assertThat(seen[0]).as("forwarded for %s", who).isEqualTo("Bearer " + tokens.get(i));
        assertThat(asToolsSeesIt.authenticate(seen[1]).name())
            .as("exchanged for %s", who)
            .isEqualTo(subjects.get(i));
        assertThat(seen[2]).as("nothing to the server that asks for nothing").isEqualTo("none");
        assertThat(seen[3]).as("the server's own credential").isEqualTo("Bearer own");
        assertThat(seen[4])
            .as("through lead, worker has no token of %s's to forward", who)
            .isEqualTo("none");
      }
      // the agent called through lead names each caller, carried by lead
      Pattern audit =
          Pattern.compile("call caller=(\\S+) client=daedalus agent=worker .* via=lead");
      List<String> carried = new ArrayList<>();
      for (ILoggingEvent e : log.events()) {
        Matcher m = audit.matcher(e.getFormattedMessage());
        if (e.getLoggerName().equals("pallas.audit") && m.matches()) {
          carried.add(m.group(1));
        }
      }
      assertThat(carried).containsExactlyInAnyOrderElementsOf(subjects);
      // (the forwarding server's whoami answers with the caller's token, which the MCP SDK's own
      // DEBUG lines then quote; the audit and every line's MDC are ours)
      assertThat(log.events())
          .as("no caller's token in an audit line or a line's MDC")
          .noneMatch(e ->
              tokens.stream()
                  .anyMatch(t ->
                      String.valueOf(e.getMDCPropertyMap()).contains(t)
                          || e.getLoggerName().equals("pallas.audit")
                              && e.getFormattedMessage().contains(t)));
    }
    // every request each server saw, not only the answers: nothing crossed
    List<String> forwarded = fwd.authorizations().subList(fwdBefore, fwd.authorizations().size());
    List<String> expected = new ArrayList<>(tokens.stream().map(t -> "Bearer " + t).toList());
    expected.addAll(java.util.Collections.nCopies(CALLERS, "none"));
    assertThat(forwarded).containsExactlyInAnyOrderElementsOf(expected);
    assertThat(xchg.authorizations().subList(xchgBefore, xchg.authorizations().size()))
        .hasSize(CALLERS)
        .noneMatch(a -> tokens.stream().anyMatch(a::contains));
    assertThat(open.authorizations().subList(openBefore, open.authorizations().size()))
        .hasSize(CALLERS)
        .allMatch("none"::equals);
    assertThat(own.authorizations().subList(ownBefore, own.authorizations().size()))
        .hasSize(CALLERS)
        .allMatch("Bearer own"::equals);
  }
}
