package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.runtime.testing.KeycloakServer;
import ca.helu.pallas.runtime.testing.RunningFleet;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Daedalus's side of inbound OAuth (issue 18 §6; docs/contract.md, "Authentication"): the official
 * Python MCP SDK, given the agent's URL and a Keycloak client's id and secret, is refused without a
 * token, then follows the 401 to the agent's Protected Resource Metadata, discovers the issuer,
 * obtains a client-credentials token there and calls the agent (e2e/python/oauth_client.py, with
 * the SDK e2e/setup.sh installs); so does the official TypeScript SDK (e2e/ts/oauth_client.mjs).
 */
class PythonOAuthIT {
  @RegisterExtension static final KeycloakServer KEYCLOAK = new KeycloakServer();
  private static final Path E2E = Path.of("..", "e2e").toAbsolutePath().normalize();

  @Test
  void thePythonSdkDiscoversTheIssuerFromA401AndCallsWithAClientCredentialsToken()
      throws Exception {
    oauthClientCalls(
        E2E.resolve(".work/venv/bin/python").toString(),
        E2E.resolve("python/oauth_client.py").toString());
  }

  /** The same with the TypeScript SDK (e2e/ts/oauth_client.mjs). */
  @Test
  void theTypeScriptSdkDiscoversTheIssuerFromA401AndCallsWithAClientCredentialsToken()
      throws Exception {
    oauthClientCalls(
        "node",
        E2E.resolve("ts/oauth_client.mjs").toString(),
        "--modules",
        E2E.resolve(".work/conformance/node_modules").toString());
  }

  /** An SDK's oauth_client (its command first) refused without a token, answered with one. */
  private static void oauthClientCalls(String... client) throws Exception {
    run(List.of("bash", E2E.resolve("setup.sh").toString()), 900);
    try (RunningFleet fleet =
        RunningFleet.start(
            """
            apiVersion: pallas.helu.ca/v1alpha1
            kind: PallasDeployment
            metadata: {name: secured}
            spec:
              host: 127.0.0.1
              registry: {port: ${port:registry}}
              defaultModel: passthrough
              agents: [{name: helper, port: ${port:helper}}]
              auth:
                oidc:
                  issuerUrl: ISSUER
                  audience: https://agents.pallas.test/{agent}
                  requiredScopes: [agents:call]
            """
                .replace("ISSUER", KEYCLOAK.issuer()))) {
      List<String> command = new ArrayList<>(List.of(client));
      command.addAll(
          List.of(
              "--url",
              fleet.mcpUrl("helper"),
              "--issuer",
              KEYCLOAK.issuer(),
              "--client-id",
              "daedalus",
              "--client-secret",
              "daedalus-secret",
              "--scope",
              "agents:call",
              "--message",
              "hello with a token"));
      String printed = run(command, 300);
      assertThat(printed).containsPattern("without a token: .*(Unauthorized|401)");
      assertThat(printed).contains("answer: hello with a token");
    }
  }

  /** Runs a command; its output, once it exited 0. */
  private static String run(List<String> command, int timeoutSeconds) throws Exception {
    Path log = Files.createTempFile("pallas-python", ".log");
    try {
      Process p =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(log.toFile())
              .start();
      assertThat(p.waitFor(timeoutSeconds, TimeUnit.SECONDS)).as(command.toString()).isTrue();
      String output = Files.readString(log);
      System.out.println(output);
      assertThat(p.exitValue()).as(output).isZero();
      return output;
    } finally {
      Files.deleteIfExists(log);
    }
  }
}
