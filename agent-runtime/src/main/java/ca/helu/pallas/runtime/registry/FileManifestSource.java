package ca.helu.pallas.runtime.registry;

import ca.helu.pallas.api.InvalidDeploymentException;
import ca.helu.pallas.api.ManifestParser;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A manifest file, re-read every interval; its text is delivered when it changed. */
public final class FileManifestSource implements ManifestSource {
  private static final Logger LOG = LoggerFactory.getLogger(FileManifestSource.class);

  private final Path file;
  private final Duration interval;
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          r -> Thread.ofPlatform().daemon().name("pallas-manifest-reload").unstarted(r));
  private String last;

  public FileManifestSource(Path file, Duration interval) {
    this.file = file;
    this.interval = interval;
  }

  @Override
  public String describe() {
    return file.toString();
  }

  /** The text now; delivered by {@link #start} too, so a change made meanwhile is still seen. */
  public String read() throws IOException {
    String text = ManifestParser.readText(file);
    synchronized (this) {
      last = text;
    }
    return text;
  }

  @Override
  public void start(Consumer<String> onText) {
    timer.scheduleWithFixedDelay(
        () -> {
          try {
            String text = ManifestParser.readText(file);
            synchronized (this) {
              if (text.equals(last)) {
                return;
              }
              last = text;
            }
            onText.accept(text);
          } catch (IOException | InvalidDeploymentException e) {
            // a file grown past the limit is not read: the last good manifest is served on
            LOG.warn("cannot re-read {}: {}", file, e.getMessage());
          }
        },
        interval.toMillis(),
        interval.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
