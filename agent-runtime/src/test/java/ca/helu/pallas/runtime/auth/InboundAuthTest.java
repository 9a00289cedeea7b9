package ca.helu.pallas.runtime.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ca.helu.pallas.api.AuthSpec;
import ca.helu.pallas.api.OidcAuthSpec;
import ca.helu.pallas.api.StaticTokensSpec;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What spec.auth makes of an agent (docs/runtime.md, "Inbound authentication"), and the static
 * tokens read from a directory as a mounted Secret holds them (docs/configuration.md).
 */
class InboundAuthTest {
  private static final StaticTokens TOKENS = new StaticTokens(Map.of("daedalus", "t0ken"));
  private static final AuthSpec STATIC =
      new AuthSpec(null, new StaticTokensSpec("agent-tokens"), null);

  @TempDir Path dir;

  @Test
  void theManifestAndTheGivenTokensMustAgree() {
    assertThatThrownBy(() -> InboundAuth.check(STATIC, null))
        .hasMessageContaining("--static-tokens DIR")
        .hasMessageContaining("'agent-tokens'");
    assertThatThrownBy(() -> InboundAuth.check(null, TOKENS))
        .hasMessageContaining("does not set spec.auth.staticTokens");
    InboundAuth.check(STATIC, TOKENS);
    assertThat(InboundAuth.of(null, "a", "http://h:1/mcp", null, null)).isEmpty();
  }

  @Test
  void theMetadataNamesTheResourceTheIssuerAndTheScopes() throws Exception {
    AuthSpec oidc =
        new AuthSpec(
            new OidcAuthSpec(
                "https://keycloak.example/realms/pallas/",
                null,
                List.of("agents:call"),
                null,
                null),
            null,
            false);
    InboundAuth auth =
        InboundAuth.of(oidc, "research", "http://fleet-research.ns.svc:24201/mcp", null, null)
            .orElseThrow();
    assertThat(auth.metadataUrl())
        .isEqualTo("http://fleet-research.ns.svc:24201/.well-known/oauth-protected-resource/mcp");
    assertThat(auth.openHealth()).isFalse();
    assertThat(auth.scope()).isEqualTo("agents:call");
    JsonNode metadata = new ObjectMapper().readTree(auth.metadata());
    assertThat(metadata.path("resource").asText())
        .isEqualTo("http://fleet-research.ns.svc:24201/mcp");
    assertThat(metadata.path("authorization_servers").toString())
        .isEqualTo("[\"https://keycloak.example/realms/pallas\"]");
    assertThat(metadata.path("scopes_supported").toString()).isEqualTo("[\"agents:call\"]");
    assertThat(metadata.path("bearer_methods_supported").toString()).isEqualTo("[\"header\"]");
    assertThat(auth.problem()).hasValueSatisfying(p -> assertThat(p).contains("not been reached"));
  }

  @Test
  void staticTokensAreOneFilePerCallerSkippingTheSecretsBookkeeping() throws Exception {
    Files.writeString(dir.resolve("daedalus"), "  t0ken-of-daedalus\n");
    Files.createDirectories(dir.resolve("..2026_11_25_01_00_00.123"));
    Files.writeString(dir.resolve("..data"), "not a caller");
    StaticTokens tokens = StaticTokenFiles.read(dir);
    assertThat(tokens.names()).containsExactly("daedalus");
    assertThat(tokens.authenticate("Bearer t0ken-of-daedalus").name()).isEqualTo("daedalus");
  }

  @Test
  void anEmptyOversizedOrMissingTokenDirectoryIsRefusedByName() throws Exception {
    assertThatThrownBy(() -> StaticTokenFiles.read(dir)).hasMessageContaining("holds no token");
    assertThatThrownBy(() -> StaticTokenFiles.read(dir.resolve("nope")))
        .hasMessageContaining("is not a directory");
    Files.writeString(dir.resolve("empty"), "\n");
    assertThatThrownBy(() -> StaticTokenFiles.read(dir)).hasMessageContaining("empty is empty");
    Files.delete(dir.resolve("empty"));
    Files.writeString(dir.resolve("huge"), "x".repeat(BearerTokens.MAX_LENGTH + 1));
    assertThatThrownBy(() -> StaticTokenFiles.read(dir))
        .hasMessageContaining("huge is longer than 16384 bytes")
        .hasMessageNotContaining("xxxx");
  }
}
