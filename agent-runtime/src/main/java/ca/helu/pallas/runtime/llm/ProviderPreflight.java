package ca.helu.pallas.runtime.llm;

import ca.helu.pallas.api.Provider;
import ca.helu.pallas.api.ProviderSpec;
import ca.helu.pallas.runtime.config.Secrets;
import ca.helu.pallas.runtime.health.CheckResult;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * The LLM preflight (docs/runtime.md, "Health"): OpenAI-compatible {@code GET {baseUrl}/models}
 * must list the model; Anthropic {@code GET {baseUrl}/models/{model}} must answer 200. Warn-only, 5
 * s, never throws, never puts a key into its message. Built-in test models always pass.
 */
public final class ProviderPreflight {
  private static final ObjectMapper JSON = new ObjectMapper();

  public static final Duration TIMEOUT = Duration.ofSeconds(5);
  private final Supplier<HttpClient> http;

  public ProviderPreflight(Supplier<HttpClient> http) {
    this.http = http;
  }

  public CheckResult check(ModelRef ref, ProviderSpec spec, Secrets secrets) {
    Provider provider = ref.llm().orElse(null);
    if (provider == null) {
      return CheckResult.ok("built-in test model");
    }
    String model = ref.name();
    String base = ProviderModel.baseUrl(provider, spec, secrets).replaceAll("/+$", "");
    String key = ProviderModel.apiKey(provider, spec, secrets);
    HttpRequest.Builder request =
        switch (provider) {
          case ANTHROPIC ->
              HttpRequest.newBuilder(URI.create(base + "/models/" + model))
                  .header("x-api-key", key)
                  .header("anthropic-version", "2023-06-01");
          case OPENAI -> {
            HttpRequest.Builder models = HttpRequest.newBuilder(URI.create(base + "/models"));
            if (!key.isEmpty()) {
              models.header("Authorization", "Bearer " + key);
            }
            yield models;
          }
        };
    try {
      HttpResponse<String> response =
          http.get()
              .send(request.timeout(TIMEOUT).GET().build(), HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() == 404 && provider == Provider.ANTHROPIC) {
        return CheckResult.failed("model '" + model + "' not found");
      }
      if (response.statusCode() != 200) {
        return CheckResult.failed("HTTP " + response.statusCode());
      }
      if (provider == Provider.OPENAI && !listsModel(response.body(), model)) {
        return CheckResult.failed("model '" + model + "' not found");
      }
      return CheckResult.ok("model available");
    } catch (HttpTimeoutException e) {
      return CheckResult.failed("timed out after " + TIMEOUT.toSeconds() + "s");
    } catch (ConnectException e) {
      return CheckResult.failed("unreachable (connection refused)");
    } catch (IOException e) {
      return CheckResult.failed("unreachable (" + e.getClass().getSimpleName() + ")");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return CheckResult.failed("interrupted");
    } catch (IllegalArgumentException e) {
      return CheckResult.failed("bad base URL");
    }
  }

  /** Whether an OpenAI-compatible GET /models answer ({"data":[{"id":...}]}) lists the model. */
  static boolean listsModel(String body, String model) {
    try {
      for (JsonNode m : JSON.readTree(body).path("data")) {
        if (model.equals(m.path("id").asText(null))) {
          return true;
        }
      }
    } catch (IOException e) {
      // not JSON: no model listed
    }
    return false;
  }
}
