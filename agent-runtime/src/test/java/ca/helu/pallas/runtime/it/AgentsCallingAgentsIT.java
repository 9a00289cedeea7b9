package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.runtime.auth.CarriedCaller;
import ca.helu.pallas.runtime.auth.StaticTokens;
import ca.helu.pallas.runtime.testing.AuthProbe;
import ca.helu.pallas.runtime.testing.LogCapture;
import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import ca.helu.pallas.runtime.testing.TestMcpServer;
import ch.qos.logback.classic.spi.ILoggingEvent;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Agents of a fleet with inbound authentication calling each other in one process (issue 18 §3;
 * docs/runtime.md, "Agents calling agents"): the calling agent presents a key of its own, which the
 * called agent knows, and carries its caller, whom the called agent names in its audit line. Even
 * with nothing open to a client without a token (openHealth: false) the call goes through; the
 * caller's own token goes no further than the agent it called; a carried caller is believed only
 * from an agent.
 */
class AgentsCallingAgentsIT {
  private static final String DAEDALUS = "daedalus-token-5f0c11d2a9b7";
  private static final String ARGOS = "argos-token-77e1b0c3d4f5";
  private static TestMcpServer tools;
  private static RunningFleet fleet;

  @BeforeAll
  static void start() {
    tools = TestMcpServer.start();
    fleet =
        RunningFleet.start(
            """
            apiVersion: pallas.helu.ca/v1alpha1
            kind: PallasDeployment
            metadata: {name: calling}
            spec:
              host: 127.0.0.1
              registry: {port: ${port:registry}}
              defaultModel: passthrough
              auth: {staticTokens: {secretName: callers}, openHealth: false}
              mcpServers:
                - {name: tools, url: "%s", forwardInboundAuth: true}
              agents:
                - {name: lead, port: ${port:lead}, servers: [helper], instanceScope: request}
                - {name: helper, port: ${port:helper}, servers: [tools], instanceScope: request}
            """
                .formatted(tools.url()),
            o ->
                o.withStaticTokens(new StaticTokens(Map.of("daedalus", DAEDALUS, "argos", ARGOS))));
  }

  @AfterAll
  static void stop() {
    fleet.close();
    tools.close();
  }

  private static List<String> auditOf(LogCapture log, String agent) {
    return log.events().stream()
        .filter(e -> e.getLoggerName().equals("pallas.audit"))
        .map(ILoggingEvent::getFormattedMessage)
        .filter(l -> l.contains(" agent=" + agent + " "))
        .toList();
  }

  @Test
  void anAgentCallsAnotherAsItselfForItsCallerWhomTheOtherNames() throws Exception {
    try (LogCapture log = new LogCapture()) {
      RawMcp daedalus = RawMcp.open(fleet.mcpUrl("lead"), DAEDALUS);
      String answer =
          RawMcp.text(
              daedalus.callTool(
                  "send_message",
                  Map.of("message", "***CALL_TOOL helper__helper {\"message\": \"hello\"}")));
      assertThat(answer).isEqualTo("hello");
      assertThat(auditOf(log, "helper"))
          .singleElement()
          .satisfies(line ->
              assertThat(line)
                  .startsWith("call caller=daedalus client=- agent=helper tool=helper outcome=ok")
                  .endsWith(" via=lead"));
      assertThat(auditOf(log, "lead"))
          .singleElement()
          .satisfies(
              line -> assertThat(line).startsWith("call caller=daedalus ").endsWith(" via=-"));
      assertThat(log.lines()).noneMatch(l -> l.contains("pallas-agent."));
    }
  }

  @Test
  void aCallersTokenGoesNoFurtherThanTheAgentItCalled() throws Exception {
    RawMcp direct = RawMcp.open(fleet.mcpUrl("helper"), DAEDALUS);
    assertThat(
            RawMcp.text(
                direct.callTool("send_message", Map.of("message", "***CALL_TOOL tools__whoami"))))
        .as("the server that asks for it gets the caller's token")
        .isEqualTo("Bearer " + DAEDALUS);
    RawMcp throughLead = RawMcp.open(fleet.mcpUrl("lead"), DAEDALUS);
    String answer =
        RawMcp.text(
            throughLead.callTool(
                "send_message",
                Map.of(
                    "message",
                    "***CALL_TOOL helper__helper {\"message\": \"***CALL_TOOL tools__whoami\"}")));
    assertThat(answer)
        .as("through lead, helper has the agent's identity, not the caller's token, to pass on")
        .isEqualTo("none");
  }

  @Test
  void aCarriedCallerIsBelievedOnlyFromAnAgent() throws Exception {
    try (LogCapture log = new LogCapture()) {
      RawMcp forging =
          RawMcp.open(fleet.mcpUrl("helper"), ARGOS)
              .withHeaders(CarriedCaller.headers("daedalus", "daedalus-client"));
      forging.callTool("send_message", Map.of("message", "who am I"));
      assertThat(auditOf(log, "helper"))
          .singleElement()
          .satisfies(line ->
              assertThat(line)
                  .startsWith("call caller=argos client=- agent=helper")
                  .endsWith(" via=-"));
    }
  }

  @Test
  void aTokenThatLooksLikeAnAgentsKeyIsRefused() throws Exception {
    HttpResponse<String> refused =
        AuthProbe.sendMessage(fleet.mcpUrl("helper"), "Bearer pallas-agent." + "0f".repeat(32));
    assertThat(refused.statusCode()).isEqualTo(401);
    assertThat(refused.headers().firstValue("WWW-Authenticate").orElseThrow())
        .contains("error=\"invalid_token\"")
        .contains("the agent key is not one of this fleet's");
  }
}
