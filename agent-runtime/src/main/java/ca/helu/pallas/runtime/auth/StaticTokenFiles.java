package ca.helu.pallas.runtime.auth;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/**
 * Static tokens read from a directory, one file per caller: the file's name is the caller's name,
 * its content (stripped) the token (docs/configuration.md, "Inbound authentication"). That is the
 * shape of a Kubernetes Secret mounted as a volume, whose bookkeeping entries start with a dot and
 * are skipped.
 */
public final class StaticTokenFiles {
  private StaticTokenFiles() {}

  /**
   * @throws IllegalArgumentException naming the directory or the file that cannot be used; never
   *     quoting a token
   */
  public static StaticTokens read(Path dir) {
    if (!Files.isDirectory(dir)) {
      throw new IllegalArgumentException("static tokens: " + dir + " is not a directory");
    }
    Map<String, String> tokens = new TreeMap<>();
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
      for (Path file : files) {
        String name = file.getFileName().toString();
        if (name.startsWith(".") || !Files.isRegularFile(file)) {
          continue;
        }
        tokens.put(name, token(file));
      }
    } catch (IOException e) {
      throw new IllegalArgumentException(
          "static tokens: cannot read " + dir + ": " + e.getMessage());
    }
    if (tokens.isEmpty()) {
      throw new IllegalArgumentException(
          "static tokens: " + dir + " holds no token (one file per caller, named after it)");
    }
    return new StaticTokens(tokens);
  }

  private static String token(Path file) throws IOException {
    try (InputStream in = Files.newInputStream(file)) {
      // a token file is small; a larger one is a mistake, refused before it is held
      byte[] bytes = in.readNBytes(BearerTokens.MAX_LENGTH + 1);
      if (bytes.length > BearerTokens.MAX_LENGTH) {
        throw new IllegalArgumentException(
            "static tokens: "
                + file
                + " is longer than "
                + BearerTokens.MAX_LENGTH
                + " bytes, which no bearer token is");
      }
      String token = new String(bytes, StandardCharsets.UTF_8).strip();
      if (token.isEmpty()) {
        throw new IllegalArgumentException("static tokens: " + file + " is empty");
      }
      return token;
    }
  }
}
