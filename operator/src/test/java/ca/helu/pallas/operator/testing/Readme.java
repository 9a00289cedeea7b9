package ca.helu.pallas.operator.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** The commands README.md (and docs/) document, so tests run exactly what a user reads. */
public final class Readme {
  private static final Path README = Path.of("..", "README.md");

  private Readme() {}

  /** The non-blank lines of the first bash block after a README heading. */
  public static List<String> block(String heading) throws IOException {
    return block(README, heading);
  }

  /** The non-blank lines of the first bash block after a heading of a Markdown file. */
  public static List<String> block(Path markdown, String heading) throws IOException {
    String readme = Files.readString(markdown);
    int at = readme.indexOf(heading);
    if (at < 0) {
      throw new AssertionError(markdown + " has no heading " + heading);
    }
    String section = readme.substring(at);
    String block = section.substring(section.indexOf("```bash\n") + 8);
    return block.substring(0, block.indexOf("```")).lines().filter(l -> !l.isBlank()).toList();
  }
}
