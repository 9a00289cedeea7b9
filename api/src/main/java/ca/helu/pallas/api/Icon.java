package ca.helu.pallas.api;

import ca.helu.pallas.api.validation.Formats;
import com.fasterxml.jackson.annotation.JsonFormat;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import java.util.List;

/** An icon for the registry entry; sizes is an array, a single string is accepted too. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Icon(
    @JsonPropertyDescription("Absolute or relative URL of the icon.")
        @Required
        @Pattern(Formats.NOT_BLANK)
        @Size(max = 2048)
        String src,
    @JsonPropertyDescription("Sizes such as \"48x48\" or \"any\".")
        @JsonFormat(with = JsonFormat.Feature.ACCEPT_SINGLE_VALUE_AS_ARRAY)
        List<String> sizes,
    @JsonPropertyDescription("MIME type, e.g. image/svg+xml.") String mimeType) {}
