package ca.helu.pallas.api;

import ca.helu.pallas.api.validation.Formats;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import java.util.Map;

/** Prometheus scraping of every pod. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record MonitoringSpec(
    @JsonPropertyDescription("A prometheus-operator ServiceMonitor for every pod.")
        ServiceMonitorSpec serviceMonitor) {

  /** The ServiceMonitor the operator creates when the monitoring.coreos.com CRD exists. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record ServiceMonitorSpec(
      @JsonPropertyDescription("Create the ServiceMonitor. Default false.") Boolean enabled,
      @JsonPropertyDescription("Scrape interval, e.g. 30s. Default: Prometheus' own.")
          @Pattern(Formats.DURATION)
          String interval,
      @JsonPropertyDescription("Extra labels, e.g. release: prometheus.")
          Map<String, String> labels) {}
}
