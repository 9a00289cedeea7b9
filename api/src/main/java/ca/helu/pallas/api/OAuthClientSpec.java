package ca.helu.pallas.api;

import ca.helu.pallas.api.validation.Formats;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/**
 * The agents' own OAuth client at the issuer (docs/runtime.md, "Downstream credentials"): its id
 * and secret, with which an agent exchanges its callers' tokens for tokens of the servers that ask
 * for {@code tokenExchange}.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record OAuthClientSpec(
    @JsonPropertyDescription("The client id, e.g. pallas-agents.")
        @Required
        @Pattern(Formats.CLIENT_ID)
        @Size(max = 256)
        String id,
    @JsonPropertyDescription(
            "The client secret, by secretKeyRef (or env, with serve); never inline. Only the pods"
                + " of agents with a tokenExchange server get it, and the registry's, whose"
                + " call_tool exchanges as they do.")
        @Required
        SecretValue secret) {}
