package ca.helu.pallas.api;

import java.util.Arrays;
import java.util.Optional;
import java.util.function.Function;

/**
 * An LLM provider a model string names ({@code openai.gpt-4o}): its section of {@code
 * spec.providers}, the variable its key is read from without one, and its public API. Every place
 * that handles a provider switches over these, so a new provider is one constant here and a compile
 * error wherever it needs handling.
 */
public enum Provider {
  /** Any OpenAI-compatible chat-completions server: OpenAI, vLLM, llama.cpp, Ollama. */
  OPENAI(Models.OPENAI, ProvidersSpec::openai, "OPENAI_API_KEY", "https://api.openai.com/v1"),
  /** Anthropic's Messages API. */
  ANTHROPIC(
      Models.ANTHROPIC,
      ProvidersSpec::anthropic,
      "ANTHROPIC_API_KEY",
      "https://api.anthropic.com/v1");

  private final String id;
  private final Function<ProvidersSpec, ProviderSpec> section;
  private final String keyVariable;
  private final String defaultBaseUrl;

  Provider(
      String id,
      Function<ProvidersSpec, ProviderSpec> section,
      String keyVariable,
      String defaultBaseUrl) {
    this.id = id;
    this.section = section;
    this.keyVariable = keyVariable;
    this.defaultBaseUrl = defaultBaseUrl;
  }

  /** The name in model strings and in {@code spec.providers}. */
  public String id() {
    return id;
  }

  /** Its section of the manifest's providers, or null. */
  public ProviderSpec of(PallasDeploymentSpec spec) {
    return section.apply(spec.effectiveProviders());
  }

  /** The field of its section, for messages: {@code spec.providers.openai}. */
  public String field() {
    return "spec.providers." + id;
  }

  /** The environment variable holding its key when the manifest gives none. */
  public String keyVariable() {
    return keyVariable;
  }

  /** Its public API, when the manifest gives no baseUrl. */
  public String defaultBaseUrl() {
    return defaultBaseUrl;
  }

  public static Optional<Provider> byId(String id) {
    return Arrays.stream(values()).filter(p -> p.id.equals(id)).findFirst();
  }

  /** The provider a model string names, or empty (a built-in model). */
  public static Optional<Provider> ofModel(String model) {
    int dot = model.indexOf('.');
    return dot < 0 ? Optional.empty() : byId(model.substring(0, dot));
  }
}
