package ca.helu.pallas.operator.testing;

import java.nio.file.Files;
import java.nio.file.Path;

/** The binaries tools/go-binaries.sh builds from the Go module proxy (helm, promtool, ...). */
public final class GoBinaries {
  private GoBinaries() {}

  /** Where the binaries are, whether they are built yet or not. */
  public static Path dir() {
    Path cache =
        Path.of(
            System.getenv()
                .getOrDefault(
                    "PALLAS_CACHE",
                    Path.of(System.getProperty("user.home"), ".cache", "pallas").toString()));
    return cache.resolve(Path.of("kube", "v" + KubeCluster.VERSION, "bin"));
  }

  public static Path path(String name) {
    Path binary = dir().resolve(name);
    if (!Files.isExecutable(binary)) {
      throw new IllegalStateException(
          "no " + name + " at " + binary + ": run tools/go-binaries.sh " + name);
    }
    return binary;
  }
}
