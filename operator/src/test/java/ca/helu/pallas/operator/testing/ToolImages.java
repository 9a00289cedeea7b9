package ca.helu.pallas.operator.testing;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.runtime.testing.JaegerServer;
import ca.helu.pallas.runtime.testing.ServerEverything;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The images the real-cluster tier runs besides Pallas' own (Daedalus, an MCP server, the
 * Prometheus stack, PostgreSQL, Jaeger), built by e2e/cluster/tool-images.py into docker-archive
 * tarballs (cached under ~/.cache/pallas/images).
 */
public final class ToolImages {
  /** One image: its tag (what a pod names) and its tarball. */
  public record Image(String tag, Path tarball) {
    /** The part of the tag after the colon. */
    public String version() {
      return tag.substring(tag.lastIndexOf(':') + 1);
    }
  }

  private ToolImages() {}

  /** Builds (or takes from the cache) every image into {@code out}, by image name. */
  public static Map<String, Image> build(NodeCluster cluster, Path out) throws Exception {
    String printed =
        cluster
            .sh(
                "e2e/cluster/tool-images.py --out '"
                    + out
                    + "' --server-everything "
                    + ServerEverything.VERSION
                    + " --jaeger '"
                    + JaegerServer.binary()
                    + "' 2>&1",
                Duration.ofMinutes(30))
            .ok();
    // one line per image: TAG PATH SIZE_BYTES built|cached SECONDS; progress lines besides
    Map<String, Image> images = new LinkedHashMap<>();
    for (String line : printed.lines().toList()) {
      String[] words = line.split(" ");
      if (words.length == 5 && words[1].startsWith(out.toString())) {
        String name = words[0].substring(0, words[0].lastIndexOf(':'));
        images.put(name, new Image(words[0], Path.of(words[1])));
        System.out.println("tool image " + line);
      }
    }
    assertThat(images.keySet())
        .as(printed)
        .containsExactlyInAnyOrder(
            "pallas-daedalus",
            "pallas-mcp-everything",
            "prometheus",
            "prometheus-operator",
            "prometheus-config-reloader",
            "pallas-postgres",
            "pallas-jaeger");
    return images;
  }

  public static List<Path> tarballs(Map<String, Image> images) {
    return images.values().stream().map(Image::tarball).toList();
  }
}
