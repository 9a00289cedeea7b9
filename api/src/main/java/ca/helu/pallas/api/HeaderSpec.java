package ca.helu.pallas.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** An HTTP header for a downstream server: a plain value, or a secret. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record HeaderSpec(
    @JsonPropertyDescription("Header name, e.g. Authorization.") String name,
    @JsonPropertyDescription("Plain value (not secret).") String value,
    @JsonPropertyDescription("Secret value.") SecretValue valueFrom) {}
