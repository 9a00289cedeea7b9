package io.modelcontextprotocol.spec;

import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import reactor.core.publisher.Mono;

/**
 * Re-creates an MCP session under the id another replica gave it (docs/runtime.md, "Sessions").
 *
 * <p>SDK gap (2.1.0): {@link McpStreamableServerSession.Factory} starts a session only under a new
 * random id, and the handlers a server gives its factory ({@link
 * DefaultMcpStreamableServerSessionFactory}) are package-private. This adapter, in the SDK's
 * package, reads them without reflection: should the SDK rename or move them, it stops compiling,
 * and should it hand the transport another factory, {@link #restore} fails loudly
 * (SessionRestoreTest). The session's close action is the server's clean-up of resource
 * subscriptions, which an agent does not offer, so none is needed.
 */
public final class PallasSessionRestore {
  private PallasSessionRestore() {}

  /**
   * A session with this id, for a client that initialized with {@code init}, served by the handlers
   * of the server that built {@code factory}.
   *
   * @throws IllegalStateException when the factory is not the SDK's default one
   */
  public static McpStreamableServerSession restore(
      McpStreamableServerSession.Factory factory,
      String id,
      McpSchema.InitializeRequest init,
      JsonSchemaValidator validator) {
    if (!(factory instanceof DefaultMcpStreamableServerSessionFactory server)) {
      throw new IllegalStateException(
          "this MCP SDK gives the transport a session factory Pallas cannot re-create sessions"
              + " with: "
              + (factory == null ? "none" : factory.getClass().getName()));
    }
    return new McpStreamableServerSession(
        id,
        init.capabilities(),
        init.clientInfo(),
        server.requestTimeout,
        server.requestHandlers,
        server.notificationHandlers,
        Mono::empty,
        validator);
  }
}
