package ca.helu.pallas.api;

import ca.helu.pallas.api.validation.DeploymentValidator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/** Reads PallasDeployment manifests from YAML (or JSON) and validates them. */
public final class ManifestParser {
  private static final ObjectMapper YAML =
      YAMLMapper.builder(new YAMLFactory())
          .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
          .build();

  /**
   * The largest manifest read, in bytes: what etcd stores for one Kubernetes object (1.5 MiB), so
   * every manifest a cluster accepts is read here too, and a larger file is refused before any of
   * it is parsed, in bounded time and memory (docs/configuration.md).
   */
  public static final int MAX_MANIFEST_BYTES = 3 << 19;

  private ManifestParser() {}

  /** The mapper used for manifests; also writes them back as YAML. */
  public static ObjectMapper yamlMapper() {
    return YAML;
  }

  /** Parses and validates a manifest file, read only up to {@link #MAX_MANIFEST_BYTES}. */
  public static PallasDeployment read(Path file) {
    String text;
    try {
      text = readText(file);
    } catch (IOException e) {
      throw new InvalidDeploymentException(
          file.toString(), List.of("cannot read file: " + e.getMessage()));
    }
    return parse(text, file.toString());
  }

  /**
   * A manifest file's text, read only up to {@link #MAX_MANIFEST_BYTES}: the file may be a device
   * or a pipe without an end (/dev/zero). Larger: InvalidDeploymentException.
   */
  public static String readText(Path file) throws IOException {
    byte[] bytes;
    try (InputStream in = Files.newInputStream(file)) {
      bytes = in.readNBytes(MAX_MANIFEST_BYTES + 1);
    }
    if (bytes.length > MAX_MANIFEST_BYTES) {
      throw tooLarge(file.toString());
    }
    return new String(bytes, StandardCharsets.UTF_8);
  }

  private static InvalidDeploymentException tooLarge(String source) {
    return new InvalidDeploymentException(
        source,
        List.of(
            "the manifest is larger than 1.5 MiB ("
                + MAX_MANIFEST_BYTES
                + " bytes), the most one Kubernetes object may hold; it is not parsed"));
  }

  /** Parses and validates manifest text; {@code source} names it in error messages. */
  public static PallasDeployment parse(String text, String source) {
    // a character takes at least a byte: past the limit in characters, past it in bytes
    if (text.length() > MAX_MANIFEST_BYTES
        || text.getBytes(StandardCharsets.UTF_8).length > MAX_MANIFEST_BYTES) {
      throw tooLarge(source);
    }
    PallasDeployment deployment;
    List<String> problems = new ArrayList<>();
    try {
      JsonNode tree;
      // trailing content is checked here, not by FAIL_ON_TRAILING_TOKENS, which also trips
      // fabric8's nested deserializers (Quantity in resources)
      try (JsonParser parser = YAML.createParser(text)) {
        tree = YAML.readTree(parser);
        if (parser.nextToken() != null) {
          throw new InvalidDeploymentException(
              source, List.of("the file holds more than one YAML document; give one manifest"));
        }
      } catch (IOException e) {
        if (e instanceof JsonProcessingException j) {
          throw j;
        }
        throw new InvalidDeploymentException(source, List.of("cannot read: " + e.getMessage()));
      }
      if (tree == null || tree.isMissingNode() || tree.isNull()) {
        throw new InvalidDeploymentException(source, List.of("the manifest is empty"));
      }
      if (!tree.isObject()) {
        throw new InvalidDeploymentException(source, List.of("the manifest is not a mapping"));
      }
      // CustomResource fixes apiVersion and kind from its annotations, so check what was written
      checkText(tree, "apiVersion", PallasDeployment.API_VERSION, problems);
      checkText(tree, "kind", PallasDeployment.KIND, problems);
      deployment = YAML.treeToValue(tree, PallasDeployment.class);
    } catch (JsonProcessingException e) {
      throw new InvalidDeploymentException(source, List.of(describe(e)));
    }
    problems.addAll(DeploymentValidator.validate(deployment));
    if (!problems.isEmpty()) {
      throw new InvalidDeploymentException(source, problems);
    }
    return deployment;
  }

  private static void checkText(JsonNode tree, String field, String expected, List<String> p) {
    JsonNode value = tree.get(field);
    if (value == null || !expected.equals(value.asText())) {
      p.add(field + ": '" + (value == null ? null : value.asText()) + "' must be " + expected);
    }
  }

  static String describe(JsonProcessingException e) {
    if (e instanceof UnrecognizedPropertyException u) {
      String known =
          u.getKnownPropertyIds() == null
              ? ""
              : " (known fields: "
                  + u.getKnownPropertyIds().stream()
                      .map(Object::toString)
                      .sorted()
                      .collect(Collectors.joining(", "))
                  + ")";
      return path(u) + ": unknown field '" + u.getPropertyName() + "'" + known;
    }
    if (e instanceof InvalidFormatException f) {
      String allowed = "";
      if (f.getTargetType() != null && f.getTargetType().isEnum()) {
        allowed =
            " (allowed: "
                + java.util.Arrays.stream(f.getTargetType().getEnumConstants())
                    .map(c -> c.toString().toLowerCase(java.util.Locale.ROOT))
                    .collect(Collectors.joining(", "))
                + ")";
      }
      return path(f)
          + ": '"
          + f.getValue()
          + "' is not a valid "
          + simpleType(f.getTargetType())
          + allowed;
    }
    if (e instanceof MismatchedInputException m) {
      return path(m) + ": expected " + simpleType(m.getTargetType()) + " here";
    }
    if (e instanceof JsonMappingException m && !m.getPath().isEmpty()) {
      return path(m) + ": " + e.getOriginalMessage();
    }
    var loc = e.getLocation();
    return "not valid YAML"
        + (loc == null ? "" : " at line " + loc.getLineNr() + ", column " + loc.getColumnNr())
        + ": "
        + e.getOriginalMessage();
  }

  private static String simpleType(Class<?> type) {
    if (type == null) {
      return "value";
    }
    if (type.isEnum()) {
      return "value";
    }
    if (List.class.isAssignableFrom(type)) {
      return "a list";
    }
    if (type == Integer.class || type == int.class || type == Long.class) {
      return "integer";
    }
    if (type == Double.class || type == double.class) {
      return "number";
    }
    if (type == Boolean.class || type == boolean.class) {
      return "boolean (true or false)";
    }
    if (type == String.class) {
      return "string";
    }
    return "an object (" + type.getSimpleName() + ")";
  }

  private static String path(JsonMappingException e) {
    StringBuilder out = new StringBuilder();
    for (JsonMappingException.Reference ref : e.getPath()) {
      if (ref.getIndex() >= 0) {
        out.append('[').append(ref.getIndex()).append(']');
      } else if (ref.getFieldName() != null) {
        if (!out.isEmpty()) {
          out.append('.');
        }
        out.append(ref.getFieldName());
      }
    }
    return out.isEmpty() ? "(top level)" : out.toString();
  }
}
