package ca.helu.pallas.runtime.downstream;

import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

/**
 * The SDK's transport with our call context confined to the tools/call it belongs to.
 *
 * <p>A call puts its credentials' headers ({@link Credentials#call}) and its {@link CallWatch} in
 * the Reactor context of its request. Only the tools/call message keeps them: anything else the SDK
 * sends from that context (an initialize, a notification) goes without, so a caller's token never
 * rides another request (docs/contract.md, "Bearer forwarding"). The watch learns its request's id,
 * and an answer on the call's stream that carries another id is dropped and fails this call: the
 * SDK would otherwise complete whichever call owns that id with it. A health probe's transport
 * drops the server's notifications altogether.
 */
final class WatchingTransport implements McpClientTransport {
  /** Keys of our entries in the {@link McpTransportContext}: the call's own headers (a map). */
  static final String CALL_HEADERS = "pallas.call-headers";

  static final String WATCH = "pallas.watch";

  /** The calling span's W3C trace context headers (a map), for the tools/call POST. */
  static final String TRACE = "pallas.trace";

  private final McpClientTransport transport;
  private final boolean listens;

  /**
   * @param listens whether the client hears the server's notifications; when not, they are dropped
   *     here, before the SDK's client acts on them (DownstreamSession.Endpoint#probe)
   */
  WatchingTransport(McpClientTransport transport, boolean listens) {
    this.transport = transport;
    this.listens = listens;
  }

  static CallWatch watchOf(McpTransportContext context) {
    return context.get(WATCH) instanceof CallWatch w ? w : null;
  }

  private static CallWatch watchOf(ContextView ctx) {
    return watchOf(ctx.getOrDefault(McpTransportContext.KEY, McpTransportContext.EMPTY));
  }

  @Override
  public Mono<Void> connect(
      Function<Mono<McpSchema.JSONRPCMessage>, Mono<McpSchema.JSONRPCMessage>> handler) {
    // the transport runs the handler in the context of the request whose stream the message came on
    return transport.connect(received ->
        Mono.deferContextual(ctx -> {
          Mono<McpSchema.JSONRPCMessage> message =
              listens
                  ? received
                  : received.filter(m -> !(m instanceof McpSchema.JSONRPCNotification));
          CallWatch watch = watchOf(ctx);
          if (watch == null) {
            return handler.apply(message);
          }
          return handler.apply(
              message.filter(m -> {
                if (m instanceof McpSchema.JSONRPCResponse r && !watch.isOwnAnswer(r.id())) {
                  watch.foreignAnswer();
                  return false;
                }
                return true;
              }));
        }));
  }

  @Override
  public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
    if (message instanceof McpSchema.JSONRPCRequest request
        && McpSchema.METHOD_TOOLS_CALL.equals(request.method())) {
      return Mono.deferContextual(ctx -> {
        CallWatch watch = watchOf(ctx);
        if (watch != null) {
          watch.requestId(request.id());
        }
        return transport.sendMessage(message);
      });
    }
    return transport
        .sendMessage(message)
        .contextWrite(ctx -> ctx.put(McpTransportContext.KEY, McpTransportContext.EMPTY));
  }

  @Override
  public void setExceptionHandler(Consumer<Throwable> handler) {
    transport.setExceptionHandler(handler);
  }

  @Override
  public Mono<Void> closeGracefully() {
    return transport.closeGracefully();
  }

  @Override
  public <T> T unmarshalFrom(Object data, TypeRef<T> typeRef) {
    return transport.unmarshalFrom(data, typeRef);
  }

  @Override
  public List<String> protocolVersions() {
    return transport.protocolVersions();
  }
}
