package ca.helu.pallas.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/**
 * Where every agent of the fleet sends its traces (docs/observability.md): an OTLP/HTTP collector,
 * the share of new traces sampled, and the export's headers from a Secret (a collector's token),
 * never inline. The standard {@code OTEL_*} variables of a process win over it (docs/
 * configuration.md, "Tracing").
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record TracingSpec(
    @JsonPropertyDescription(
            "The collector's OTLP/HTTP base URL, e.g. http://jaeger.monitoring.svc:4318 (spans go"
                + " to {endpoint}/v1/traces).")
        @Required
        @Size(max = 2048)
        String endpoint,
    @JsonPropertyDescription(
            "Share of new traces sampled, 0 to 1; a caller's own decision is always kept. Default"
                + " 1.")
        @Min(0)
        @Max(1)
        Double samplingRatio,
    @JsonPropertyDescription(
            "Share of get_health calls traced, 0 to 1, sampled apart from the other calls (a"
                + " client polling health would fill the traces). Default 0: none.")
        @Min(0)
        @Max(1)
        Double healthSamplingRatio,
    @JsonPropertyDescription(
            "A Secret key holding the export's headers as name=value,name2=value2 (values"
                + " URL-encoded), e.g. a collector's token.")
        SecretValue.SecretKeyRef headers) {}
