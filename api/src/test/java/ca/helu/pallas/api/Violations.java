package ca.helu.pallas.api;

import ca.helu.pallas.api.validation.Rules;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.AnnotatedParameterizedType;
import java.lang.reflect.Field;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

/**
 * A manifest breaking each rule of the schema, and the field a refusal must name: one per rule of
 * {@link Rules} (its example) and one per constraint annotation on a field of the api records
 * (generated from the annotation). RulesTest holds the validator to them, CelRulesIT the API
 * server: a rule or constraint added once is tested on both sides without another edit.
 *
 * @param text what the API server's refusal must say besides the field, or null
 */
public record Violations(String title, String yaml, String field, String text) {
  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

  @Override
  public String toString() {
    return title;
  }

  /** One per rule, from its example. */
  public static List<Violations> ofRules() {
    return Rules.ALL.stream()
        .map(r ->
            new Violations(
                r.on().getSimpleName()
                    + (r.property() == null ? "" : "." + r.property())
                    + ": "
                    + r.message(),
                manifest(r.example().name(), r.example().spec()),
                r.example().field(),
                r.messageExpression() == null ? r.message() : null))
        .toList();
  }

  /** One per constraint of each field of each api record, at the first place the type is used. */
  public static List<Violations> ofFields() {
    List<Violations> out = new ArrayList<>();
    fields(PallasDeploymentSpec.class, "spec", n -> n, new HashSet<>(), out);
    return out;
  }

  /** Every pattern on a field (or a list's entries) of the records a manifest holds. */
  public static Set<String> patterns() {
    Set<String> out = new java.util.TreeSet<>();
    Set<Class<?>> records = new HashSet<>();
    fields(PallasDeploymentSpec.class, "spec", n -> n, records, new ArrayList<>());
    for (Class<?> type : records) {
      for (RecordComponent c : type.getRecordComponents()) {
        Field field = field(c);
        Stream.of(field.getAnnotation(Pattern.class))
            .filter(p -> p != null)
            .forEach(p -> out.add(p.value()));
        if (field.getAnnotatedType() instanceof AnnotatedParameterizedType list) {
          Pattern entry = list.getAnnotatedActualTypeArguments()[0].getAnnotation(Pattern.class);
          if (entry != null) {
            out.add(entry.value());
          }
        }
      }
    }
    return out;
  }

  public static String manifest(String name, String spec) {
    return "apiVersion: pallas.helu.ca/v1alpha1\nkind: PallasDeployment\nmetadata: {name: "
        + name
        + "}\nspec: "
        + spec
        + "\n";
  }

  /** {@code wrap}: the spec holding an object of {@code type} at {@code at}. */
  private static void fields(
      Class<?> type,
      String at,
      UnaryOperator<JsonNode> wrap,
      Set<Class<?>> seen,
      List<Violations> out) {
    if (!seen.add(type)) {
      return;
    }
    for (RecordComponent c : type.getRecordComponents()) {
      Field field = field(c);
      String path = at + "." + c.getName();
      UnaryOperator<JsonNode> set = v -> wrap.apply(JSON.objectNode().set(c.getName(), v));
      if (field.isAnnotationPresent(Required.class)) {
        out.add(violation(path + " required", path, wrap.apply(JSON.objectNode())));
      }
      breaking(field, c.getType(), entryType(c))
          .forEach(v -> out.add(violation(path + " " + v, path, set.apply(v))));
      if (field.getAnnotatedType() instanceof AnnotatedParameterizedType list
          && List.class.equals(c.getType())) {
        var entry = list.getAnnotatedActualTypeArguments()[0];
        Class<?> entryType =
            (Class<?>) ((ParameterizedType) c.getGenericType()).getActualTypeArguments()[0];
        UnaryOperator<JsonNode> inList = v -> set.apply(JSON.arrayNode().add(v));
        breaking(entry, entryType, null)
            .forEach(v -> out.add(violation(path + "[0] " + v, path + "[0]", inList.apply(v))));
        if (ours(entryType)) {
          fields(entryType, path + "[0]", inList, seen, out);
        }
      } else if (ours(c.getType())) {
        fields(c.getType(), path, set, seen, out);
      }
    }
  }

  /** Values that break each constraint on {@code element}, a value of {@code type}. */
  private static List<JsonNode> breaking(
      AnnotatedElement element, Class<?> type, Class<?> entryType) {
    List<JsonNode> out = new ArrayList<>();
    Size size = element.getAnnotation(Size.class);
    if (size != null) {
      if (size.max() < Long.MAX_VALUE) {
        out.add(sized(type, entryType, (int) size.max() + 1));
      }
      if (size.min() > 0) {
        out.add(sized(type, entryType, (int) size.min() - 1));
      }
    }
    Pattern pattern = element.getAnnotation(Pattern.class);
    if (pattern != null) {
      java.util.regex.Pattern regex = java.util.regex.Pattern.compile(pattern.value());
      out.add(
          JSON.textNode(
              Stream.of(" ", "", "not valid!")
                  .filter(s -> !regex.matcher(s).find())
                  .findFirst()
                  .orElseThrow(() -> new IllegalStateException("nothing breaks " + pattern))));
    }
    Min min = element.getAnnotation(Min.class);
    if (min != null) {
      out.add(number(type, min.inclusive() ? min.value() - 1 : min.value()));
    }
    Max max = element.getAnnotation(Max.class);
    if (max != null) {
      out.add(number(type, max.inclusive() ? max.value() + 1 : max.value()));
    }
    return out;
  }

  private static JsonNode sized(Class<?> type, Class<?> entryType, int n) {
    if (type == String.class) {
      return JSON.textNode("x".repeat(n));
    }
    ArrayNode list = JSON.arrayNode();
    for (int i = 0; i < n; i++) {
      list.add(entryType == String.class ? JSON.textNode("x" + i) : JSON.objectNode());
    }
    return list;
  }

  /** The type of a list's entries, or null. */
  private static Class<?> entryType(RecordComponent c) {
    return c.getGenericType() instanceof ParameterizedType p
            && List.class.equals(p.getRawType())
            && p.getActualTypeArguments()[0] instanceof Class<?> entry
        ? entry
        : null;
  }

  private static JsonNode number(Class<?> type, double value) {
    return type == Double.class ? JSON.numberNode(value) : JSON.numberNode((long) value);
  }

  private static Violations violation(String title, String field, JsonNode spec) {
    return new Violations(title, manifest("fleet", spec.toString()), field, null);
  }

  private static Field field(RecordComponent c) {
    try {
      return c.getDeclaringRecord().getDeclaredField(c.getName());
    } catch (NoSuchFieldException e) {
      throw new IllegalStateException(e);
    }
  }

  private static boolean ours(Class<?> type) {
    return type.isRecord() && type.getPackageName().equals(PallasDeployment.class.getPackageName());
  }
}
