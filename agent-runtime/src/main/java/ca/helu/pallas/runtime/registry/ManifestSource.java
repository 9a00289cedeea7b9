package ca.helu.pallas.runtime.registry;

import java.util.function.Consumer;

/**
 * Where the registry reads its manifest: a file it re-reads, or the operator's ConfigMap followed
 * through the Kubernetes API. Each delivers the manifest's text whenever it changes.
 */
public interface ManifestSource extends AutoCloseable {
  /**
   * Names the source in messages, e.g. {@code deployment.yaml} or {@code configmap ai/x-config}.
   */
  String describe();

  /** Starts delivering the text: once now (or as soon as it exists), then on every change. */
  void start(Consumer<String> onText);

  @Override
  void close();
}
