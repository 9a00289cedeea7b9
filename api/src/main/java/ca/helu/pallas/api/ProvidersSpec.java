package ca.helu.pallas.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** LLM providers, keyed by the provider prefix of a model string. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ProvidersSpec(
    @JsonPropertyDescription("Any OpenAI-compatible chat-completions server (openai.* models).")
        ProviderSpec openai,
    @JsonPropertyDescription("Anthropic Messages API (anthropic.* models).")
        ProviderSpec anthropic) {}
