package ca.helu.pallas.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The runtime's package arrows point one way (docs/development.md, "Package arrows"): read from the
 * sources, every reference of one runtime package to another is an arrow, and the arrows have no
 * cycle; the agent loop depends on no other runtime package (it reports through its own port,
 * {@code loop.LoopMetrics}), and health knows nothing of MCP or HTTP.
 */
class PackageArrowsTest {
  private static final Path SOURCES = Path.of("src/main/java/ca/helu/pallas/runtime");
  private static final Pattern REFERENCE =
      Pattern.compile("ca\\.helu\\.pallas\\.runtime\\.((?:[a-z][a-z0-9]*\\.)*)[A-Z]");
  private static final String ROOT = "(root)";

  private static Map<String, Set<String>> arrows;

  @BeforeAll
  static void readSources() throws IOException {
    arrows = new TreeMap<>();
    try (Stream<Path> files = Files.walk(SOURCES)) {
      files.filter(f -> f.toString().endsWith(".java")).forEach(PackageArrowsTest::read);
    }
  }

  private static void read(Path file) {
    Path dir = SOURCES.relativize(file).getParent();
    String from = dir == null ? ROOT : dir.toString().replace('/', '.');
    Set<String> to = arrows.computeIfAbsent(from, k -> new TreeSet<>());
    try {
      for (String line : Files.readAllLines(file)) {
        if (line.startsWith("package ")) {
          continue;
        }
        Matcher m = REFERENCE.matcher(line);
        while (m.find()) {
          String target =
              m.group(1).isEmpty() ? ROOT : m.group(1).substring(0, m.group(1).length() - 1);
          if (!target.equals(from)) {
            to.add(target);
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Test
  void theSourcesWereRead() {
    // a wrong path would make every other test here pass on nothing
    assertThat(arrows).containsKeys("loop", "health", "mcp", "http", "serve");
    assertThat(arrows.get("serve")).contains("loop", "mcp");
  }

  @Test
  void thereIsNoCycle() {
    for (String start : arrows.keySet()) {
      List<String> cycle = cycleFrom(start, new ArrayList<>(List.of(start)));
      assertThat(cycle).as("a cycle of package arrows").isEmpty();
    }
  }

  @Test
  void theLoopDependsOnNoOtherRuntimePackage() {
    assertThat(arrows.get("loop")).isEmpty();
  }

  @Test
  void healthKnowsNothingOfMcpOrHttp() {
    assertThat(arrows.get("health")).doesNotContain("mcp", "http", "serve");
  }

  /** A path from {@code path}'s last package back to its first, or empty. */
  private static List<String> cycleFrom(String start, List<String> path) {
    for (String next : arrows.getOrDefault(path.get(path.size() - 1), Set.of())) {
      if (next.equals(start)) {
        List<String> cycle = new ArrayList<>(path);
        cycle.add(start);
        return cycle;
      }
      if (!path.contains(next)) {
        path.add(next);
        List<String> found = cycleFrom(start, path);
        if (!found.isEmpty()) {
          return found;
        }
        path.remove(path.size() - 1);
      }
    }
    return List.of();
  }
}
