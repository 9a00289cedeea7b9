package ca.helu.pallas.runtime.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class PostgresStoreTest {
  private static final Pattern VERSIONED = Pattern.compile("V([0-9]+)__.+\\.sql");

  /** A replica skips Flyway when the store has the newest migration: it must know which it is. */
  @Test
  void theSchemaVersionIsTheNewestMigrationInTheJar() throws Exception {
    Path migrations = Path.of(PostgresStore.class.getResource("/db/migration").toURI());
    try (Stream<Path> files = Files.list(migrations)) {
      int newest =
          files
              .map(f -> VERSIONED.matcher(f.getFileName().toString()))
              .filter(Matcher::matches)
              .mapToInt(m -> Integer.parseInt(m.group(1)))
              .max()
              .orElseThrow();
      assertThat(PostgresStore.SCHEMA_VERSION).isEqualTo(newest);
    }
  }
}
