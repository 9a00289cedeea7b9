package ca.helu.pallas.runtime.mcp.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ca.helu.pallas.runtime.store.InMemorySessionStore;
import ca.helu.pallas.runtime.store.SessionStore;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import io.modelcontextprotocol.spec.DefaultMcpStreamableServerSessionFactory;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpStreamableServerSession;
import io.modelcontextprotocol.spec.PallasSessionRestore;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * The adapter over the SDK's gap (no session factory under a given id): it re-creates a session
 * under its stored id with the server's handlers, and fails loudly when the SDK hands the transport
 * a factory it does not know. And the in-memory store's bookkeeping.
 */
class SessionRestoreTest {
  private static final JsonSchemaValidator NONE =
      (schema, output) -> JsonSchemaValidator.ValidationResponse.asValid(null);
  private static final McpSchema.InitializeRequest INIT =
      new McpSchema.InitializeRequest(
          "2025-11-25",
          McpSchema.ClientCapabilities.builder().build(),
          new McpSchema.Implementation("client", "1"));

  @Test
  void aSessionIsReCreatedUnderItsStoredId() {
    var factory =
        new DefaultMcpStreamableServerSessionFactory(
            Duration.ofSeconds(5),
            init -> Mono.empty(),
            Map.of(),
            Map.of(),
            id -> Mono.empty(),
            NONE);
    McpStreamableServerSession session =
        PallasSessionRestore.restore(factory, "stored-id", INIT, NONE);
    assertThat(session.getId()).isEqualTo("stored-id");
  }

  @Test
  void anotherFactoryFailsLoudly() {
    McpStreamableServerSession.Factory other = init -> null;
    assertThatThrownBy(() -> PallasSessionRestore.restore(other, "id", INIT, NONE))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("cannot re-create sessions");
  }

  @Test
  void theStoreExpiresOnlyTheAgentsSessionsUnusedSinceTheCutoff() {
    SessionStore store = new InMemorySessionStore();
    Instant t0 = Instant.parse("2026-11-24T12:00:00Z");
    store.save(new SessionStore.StoredSession("a", "old", "{}", "2025-11-25", "", null, t0, t0));
    store.save(new SessionStore.StoredSession("a", "used", "{}", "2025-11-25", "", null, t0, t0));
    store.save(new SessionStore.StoredSession("b", "other", "{}", "2025-11-25", "", null, t0, t0));
    assertThat(store.touch("a", "used", t0.plusSeconds(60))).isTrue();
    assertThat(store.touch("a", "never", t0.plusSeconds(60))).isFalse();

    assertThat(store.expire("a", t0.plusSeconds(30))).containsExactly("old");
    assertThat(store.find("a", "used")).isPresent();
    assertThat(store.find("b", "other")).as("another agent's").isPresent();
    assertThat(store.find("b", "used")).as("sessions are per agent").isEmpty();
  }
}
