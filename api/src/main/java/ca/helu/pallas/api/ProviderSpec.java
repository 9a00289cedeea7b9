package ca.helu.pallas.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Size;

/** One LLM provider endpoint. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ProviderSpec(
    @JsonPropertyDescription(
            "Base URL of the API, e.g. http://llm:8080/v1. Default: the provider's public API.")
        @Size(max = 2048)
        String baseUrl,
    @JsonPropertyDescription("API key.") SecretValue apiKey) {}
