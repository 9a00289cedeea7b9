package ca.helu.pallas.api;

import ca.helu.pallas.api.validation.Formats;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import java.util.Map;

/**
 * Where agents keep their conversations on a cluster: a Secret of the PallasDeployment's namespace
 * holding a JDBC URL and its credentials, which the operator hands to every agent pod by reference
 * (docs/operator.md, "The conversation store"). Without it each pod keeps histories in memory.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record StoreSpec(
    @JsonPropertyDescription(
            "A Secret in this namespace with the keys url (a JDBC URL such as"
                + " jdbc:postgresql://host:5432/pallas), username and password; every agent pod"
                + " reads them from it (Kubernetes).")
        @Required
        @Pattern(Formats.DNS_SUBDOMAIN)
        @Size(max = 253)
        String secretName) {

  /** The Secret's keys, each with the environment variable an agent pod gets it as. */
  public static final Map<String, String> VARIABLES_BY_KEY =
      Map.of(
          "url", "PALLAS_STORE_URL",
          "username", "PALLAS_STORE_USERNAME",
          "password", "PALLAS_STORE_PASSWORD");
}
