package ca.helu.pallas.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.runtime.http.HttpHost;
import ca.helu.pallas.runtime.mcp.session.StreamableHttpTransport;
import ca.helu.pallas.runtime.store.InMemoryEventStore;
import ca.helu.pallas.runtime.store.InMemorySessionStore;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import io.modelcontextprotocol.server.McpAsyncServer;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.server.transport.DefaultServerTransportSecurityValidator;
import io.modelcontextprotocol.spec.McpSchema;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * The runtime's Streamable HTTP transport (StreamableHttpTransport, behind the same edge as an
 * agent) against the MCP conformance suite's {@code server-sse-polling} scenario, with no warning
 * (issue 17 §2). The scenario calls the suite's fixture tool {@code test_reconnection}, which an
 * agent does not have (its run against an agent in e2e/python gives one warning for that reason),
 * so here the transport serves a server that has it.
 */
class TransportConformanceIT {
  private static final Path E2E = Path.of("").toAbsolutePath();
  private static final Path CONFORMANCE =
      E2E.resolve(".work/conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js");

  @Test
  void serverSsePollingPassesWithoutWarnings() throws Exception {
    run(List.of("bash", "setup.sh"), 900);
    var json = new JacksonMcpJsonMapper(new ObjectMapper());
    JsonSchemaValidator none =
        (schema, output) -> JsonSchemaValidator.ValidationResponse.asValid(null);
    StreamableHttpTransport transport =
        new StreamableHttpTransport(
            "fixture",
            json,
            none,
            DefaultServerTransportSecurityValidator.builder()
                .allowedOrigins(List.of("http://localhost:*", "http://127.0.0.1:*"))
                .build(),
            request -> McpTransportContext.EMPTY,
            new InMemorySessionStore(),
            new InMemoryEventStore(),
            Duration.ofMinutes(1),
            100,
            Duration.ofMinutes(5),
            Duration.ofSeconds(30),
            session -> {});
    McpAsyncServer server =
        McpServer.async(transport)
            .serverInfo("fixture", "1")
            .jsonMapper(json)
            .jsonSchemaValidator(none)
            .capabilities(McpSchema.ServerCapabilities.builder().tools(false).build())
            .tools(
                McpServerFeatures.AsyncToolSpecification.builder()
                    .tool(
                        McpSchema.Tool.builder()
                            .name("test_reconnection")
                            .inputSchema(json, "{\"type\":\"object\",\"properties\":{}}")
                            .build())
                    .callHandler((exchange, request) ->
                        Mono.delay(Duration.ofMillis(300))
                            .thenReturn(
                                McpSchema.CallToolResult.builder()
                                    .addTextContent("reconnected")
                                    .isError(false)
                                    .build()))
                    .build())
            .build();
    HttpHost host =
        HttpHost.builder("127.0.0.1", 0)
            .servlet(
                "/mcp",
                new HttpServlet() {
                  @Override
                  public void service(ServletRequest req, ServletResponse res) throws IOException {
                    transport.service((HttpServletRequest) req, (HttpServletResponse) res);
                  }
                })
            .build()
            .start();
    try {
      Result run =
          run(
              List.of(
                  "node",
                  CONFORMANCE.toString(),
                  "server",
                  "--url",
                  "http://localhost:" + host.port() + "/mcp",
                  "--scenario",
                  "server-sse-polling"),
              120);
      assertThat(run.exitCode).as(run.output).isZero();
      Matcher summary =
          Pattern.compile("Passed: (\\d+)/(\\d+), (\\d+) failed, (\\d+) warnings")
              .matcher(run.output);
      assertThat(summary.find()).as(run.output).isTrue();
      assertThat(summary.group(1)).as(run.output).isEqualTo(summary.group(2));
      assertThat(summary.group(3)).as(run.output).isEqualTo("0");
      assertThat(summary.group(4)).as("warnings: " + run.output).isEqualTo("0");
      assertThat(run.output).contains("priming event").contains("retry field");
    } finally {
      host.close();
      server.closeGracefully().block(Duration.ofSeconds(5));
    }
  }

  private record Result(int exitCode, String output) {}

  private static Result run(List<String> command, int timeoutSeconds)
      throws IOException, InterruptedException {
    ProcessBuilder pb =
        new ProcessBuilder(command).directory(E2E.toFile()).redirectErrorStream(true);
    File log = Files.createTempFile("pallas-conformance", ".log").toFile();
    pb.redirectOutput(log);
    Process p = pb.start();
    if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(command + " timed out:\n" + Files.readString(log.toPath()));
    }
    return new Result(p.exitValue(), Files.readString(log.toPath()));
  }
}
