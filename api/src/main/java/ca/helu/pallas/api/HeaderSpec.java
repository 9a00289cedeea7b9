package ca.helu.pallas.api;

import ca.helu.pallas.api.validation.Formats;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/** An HTTP header for a downstream server: a plain value, or a secret. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record HeaderSpec(
    @JsonPropertyDescription("Header name, e.g. Authorization.")
        @Required
        @Pattern(Formats.HEADER_NAME)
        @Size(max = 256)
        String name,
    @JsonPropertyDescription("Plain value (not secret).") String value,
    @JsonPropertyDescription("Secret value.") SecretValue valueFrom) {}
