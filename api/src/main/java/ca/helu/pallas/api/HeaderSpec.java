package ca.helu.pallas.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/** An HTTP header for a downstream server: a plain value, or a secret. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
    value = "has(self.value) != has(self.valueFrom)",
    message = "set exactly one of value and valueFrom")
public record HeaderSpec(
    @JsonPropertyDescription("Header name, e.g. Authorization.")
        @Required
        @Pattern(DeploymentValidator.HEADER_NAME_PATTERN)
        @Size(max = 256)
        String name,
    @JsonPropertyDescription("Plain value (not secret).") String value,
    @JsonPropertyDescription("Secret value.") SecretValue valueFrom) {}
