package ca.helu.pallas.runtime.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/** images/image.py, which reads and runs the images the build writes (docs/images.md). */
public final class ImageTool {
  public static final Path SCRIPT = Path.of("..", "images", "image.py").toAbsolutePath();

  /** A UID no image knows, as OpenShift's restricted-v2 SCC assigns one (a namespace's first). */
  public static final String ARBITRARY_UID = "1000650000";

  private ImageTool() {}

  /**
   * What of the image {@code user} (UID[:GID]; without a GID, the runtime's choice) cannot read,
   * and a HOME or /tmp it cannot write: one line each, none when it may use all of it.
   */
  public static String unreadable(Path image, String user) throws Exception {
    Process p =
        new ProcessBuilder(
                "python3", SCRIPT.toString(), "unreadable", image.toString(), "--user", user)
            .redirectErrorStream(true)
            .start();
    String problems = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor()).as(problems).isIn(0, 1);
    return problems;
  }
}
