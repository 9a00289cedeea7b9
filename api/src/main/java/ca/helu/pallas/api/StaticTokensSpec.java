package ca.helu.pallas.api;

import ca.helu.pallas.api.validation.Formats;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/**
 * Static bearer tokens (docs/runtime.md, "Inbound authentication"): a Secret whose every key names
 * a caller and holds its token. {@code serve} reads them from a directory, one file per caller
 * ({@code --static-tokens}, docs/configuration.md), where a pod has the Secret mounted.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record StaticTokensSpec(
    @JsonPropertyDescription(
            "A Secret in this namespace: each key is a caller's name (it appears in logs and the"
                + " audit line), each value that caller's token.")
        @Required
        @Pattern(Formats.DNS_SUBDOMAIN)
        @Size(max = 253)
        String secretName) {}
