package ca.helu.pallas.runtime.metrics;

import io.prometheus.metrics.expositionformats.ExpositionFormats;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.DataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.InfoSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.StateSetSnapshot;
import io.prometheus.metrics.model.snapshots.SummarySnapshot;
import io.prometheus.metrics.model.snapshots.UnknownSnapshot;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * One agent's part of the process's metrics, for a pod that serves several (docs/metrics.md): the
 * series labelled with that agent, and the process's own (JVM, process, providers, store) only
 * where {@code processWide} asks for them, so that a scraper reaching the pod through each agent's
 * Service counts nothing twice. Micrometer filters a scrape by metric name only; this filters the
 * Prometheus client's snapshots by label and writes them with the client's own writers.
 */
final class AgentScrape {
  static final String AGENT_LABEL = "agent";

  private static final ExpositionFormats FORMATS = ExpositionFormats.init();

  private AgentScrape() {}

  static String write(MetricSnapshots all, String contentType, String agent, boolean processWide) {
    List<MetricSnapshot> kept = new ArrayList<>();
    for (MetricSnapshot family : all) {
      MetricSnapshot mine = of(family, agent, processWide);
      if (mine != null) {
        kept.add(mine);
      }
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try {
      FORMATS.findWriter(contentType).write(out, new MetricSnapshots(kept));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toString(StandardCharsets.UTF_8);
  }

  /**
   * The family's series of {@code agent}, or, with {@code processWide}, every series of a family
   * without the label; null: none.
   */
  static MetricSnapshot of(MetricSnapshot family, String agent, boolean processWide) {
    List<? extends DataPointSnapshot> points = family.getDataPoints();
    List<DataPointSnapshot> mine = new ArrayList<>();
    for (DataPointSnapshot point : points) {
      String of = point.getLabels().get(AGENT_LABEL);
      if (of == null ? processWide : of.equals(agent)) {
        mine.add(point);
      }
    }
    if (mine.isEmpty()) {
      return null;
    }
    if (mine.size() == points.size()) {
      return family;
    }
    return copy(family, mine);
  }

  @SuppressWarnings("unchecked")
  private static MetricSnapshot copy(MetricSnapshot family, List<DataPointSnapshot> points) {
    List<?> p = points;
    return switch (family) {
      case CounterSnapshot c ->
          new CounterSnapshot(c.getMetadata(), (List<CounterSnapshot.CounterDataPointSnapshot>) p);
      case GaugeSnapshot g ->
          new GaugeSnapshot(g.getMetadata(), (List<GaugeSnapshot.GaugeDataPointSnapshot>) p);
      case HistogramSnapshot h ->
          new HistogramSnapshot(
              h.isGaugeHistogram(),
              h.getMetadata(),
              (List<HistogramSnapshot.HistogramDataPointSnapshot>) p);
      case SummarySnapshot s ->
          new SummarySnapshot(s.getMetadata(), (List<SummarySnapshot.SummaryDataPointSnapshot>) p);
      case InfoSnapshot i ->
          new InfoSnapshot(i.getMetadata(), (List<InfoSnapshot.InfoDataPointSnapshot>) p);
      case StateSetSnapshot s ->
          new StateSetSnapshot(
              s.getMetadata(), (List<StateSetSnapshot.StateSetDataPointSnapshot>) p);
      case UnknownSnapshot u ->
          new UnknownSnapshot(u.getMetadata(), (List<UnknownSnapshot.UnknownDataPointSnapshot>) p);
      // a kind of metric a later Prometheus client adds: fail where it is seen, not silently
      default ->
          throw new IllegalStateException(
              "cannot split a " + family.getClass().getSimpleName() + " by agent");
    };
  }
}
