package ca.helu.pallas.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * The agents' own OAuth client at the issuer (docs/runtime.md, "Downstream credentials"): its id
 * and secret, with which an agent exchanges its callers' tokens for tokens of the servers that ask
 * for {@code tokenExchange}.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record OAuthClientSpec(
    @JsonPropertyDescription("The client id, e.g. pallas-agents.")
        @Required
        @Pattern("^[\\x21-\\x7E]+$")
        @Size(max = 256)
        String id,
    @JsonPropertyDescription(
            "The client secret, by secretKeyRef (or env, with serve); never inline. Only the pods"
                + " of agents with a tokenExchange server get it.")
        @Required
        @ValidationRule(
            value = "!has(self.value)",
            message = DeploymentValidator.INLINE_CLIENT_SECRET)
        SecretValue secret) {}
