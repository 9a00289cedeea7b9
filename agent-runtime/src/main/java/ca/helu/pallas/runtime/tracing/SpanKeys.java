package ca.helu.pallas.runtime.tracing;

import io.opentelemetry.api.common.AttributeKey;
import java.util.List;

/**
 * The attributes the runtime's spans carry (docs/observability.md, "Spans"), each key made once: a
 * key given as a string is a new key on every call, its UTF-8 form computed again at export
 * (docs/benchmarks.md, "Authentication and tracing").
 */
public final class SpanKeys {
  private SpanKeys() {}

  public static final AttributeKey<String> MCP_METHOD = AttributeKey.stringKey("mcp.method.name");
  public static final AttributeKey<String> OPERATION =
      AttributeKey.stringKey("gen_ai.operation.name");
  public static final AttributeKey<String> TOOL = AttributeKey.stringKey("gen_ai.tool.name");
  public static final AttributeKey<String> AGENT = AttributeKey.stringKey("gen_ai.agent.name");
  public static final AttributeKey<String> PROVIDER =
      AttributeKey.stringKey("gen_ai.provider.name");
  public static final AttributeKey<String> REQUEST_MODEL =
      AttributeKey.stringKey("gen_ai.request.model");
  public static final AttributeKey<String> RESPONSE_MODEL =
      AttributeKey.stringKey("gen_ai.response.model");
  public static final AttributeKey<Long> INPUT_TOKENS =
      AttributeKey.longKey("gen_ai.usage.input_tokens");
  public static final AttributeKey<Long> OUTPUT_TOKENS =
      AttributeKey.longKey("gen_ai.usage.output_tokens");
  public static final AttributeKey<List<String>> FINISH_REASONS =
      AttributeKey.stringArrayKey("gen_ai.response.finish_reasons");
  public static final AttributeKey<String> ENDUSER = AttributeKey.stringKey("enduser.id");
  public static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");
  public static final AttributeKey<String> SERVER_ADDRESS =
      AttributeKey.stringKey("server.address");
  public static final AttributeKey<Long> SERVER_PORT = AttributeKey.longKey("server.port");
  public static final AttributeKey<String> SCOPE = AttributeKey.stringKey("pallas.agent.scope");
  public static final AttributeKey<Long> TURNS_AHEAD =
      AttributeKey.longKey("pallas.conversation.turns_ahead");
  public static final AttributeKey<String> MCP_SERVER = AttributeKey.stringKey("pallas.mcp.server");
  public static final AttributeKey<String> PEER_AGENT = AttributeKey.stringKey("pallas.peer.agent");
}
