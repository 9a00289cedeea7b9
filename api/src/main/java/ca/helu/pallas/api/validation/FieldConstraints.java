package ca.helu.pallas.api.validation;

import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.AnnotatedParameterizedType;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * The schema's constraints on the fields of the api records, read from the annotations the CRD
 * generator turns into the CRD's OpenAPI schema ({@code @Required}, {@code @Size},
 * {@code @Pattern}, {@code @Min}, {@code @Max}) and checked on parsed values: a constraint added to
 * a field is enforced by the API server and by {@link DeploymentValidator} alike.
 */
final class FieldConstraints {
  /** One field of a record: its constraints, and those on its list's entries. */
  record Constrained(
      String name,
      Method accessor,
      boolean required,
      List<Constraint> own,
      List<Constraint> entry) {
    Object valueOf(Object record) {
      try {
        return accessor.invoke(record);
      } catch (IllegalAccessException | InvocationTargetException e) {
        throw new IllegalStateException("cannot read " + name, e);
      }
    }
  }

  /** One constraint: the problem with a value (never null), or null when it holds. */
  @FunctionalInterface
  interface Constraint {
    String problem(Object value);
  }

  private static final ClassValue<List<Constrained>> FIELDS =
      new ClassValue<>() {
        @Override
        protected List<Constrained> computeValue(Class<?> type) {
          return Arrays.stream(type.getRecordComponents()).map(FieldConstraints::read).toList();
        }
      };

  private FieldConstraints() {}

  /** The fields of a record type, in declaration order. */
  static List<Constrained> of(Class<?> record) {
    return FIELDS.get(record);
  }

  private static Constrained read(RecordComponent component) {
    Field field;
    try {
      field = component.getDeclaringRecord().getDeclaredField(component.getName());
    } catch (NoSuchFieldException e) {
      throw new IllegalStateException(e);
    }
    List<Constraint> entry = List.of();
    if (field.getAnnotatedType() instanceof AnnotatedParameterizedType list
        && Collection.class.isAssignableFrom(field.getType())) {
      entry = constraints(list.getAnnotatedActualTypeArguments()[0]);
    }
    Method accessor = component.getAccessor();
    accessor.setAccessible(true);
    return new Constrained(
        component.getName(),
        accessor,
        field.isAnnotationPresent(Required.class),
        constraints(field),
        entry);
  }

  /** In the order a refusal names them: the first one broken is the field's problem. */
  private static List<Constraint> constraints(AnnotatedElement element) {
    List<Constraint> out = new ArrayList<>();
    Size size = element.getAnnotation(Size.class);
    if (size != null) {
      out.add(size(size.min(), size.max()));
    }
    Pattern pattern = element.getAnnotation(Pattern.class);
    if (pattern != null) {
      out.add(pattern(pattern.value()));
    }
    Min min = element.getAnnotation(Min.class);
    Max max = element.getAnnotation(Max.class);
    if (min != null || max != null) {
      out.add(
          range(
              min == null ? null : min.value(),
              min == null || min.inclusive(),
              max == null ? null : max.value(),
              max == null || max.inclusive()));
    }
    return List.copyOf(out);
  }

  private static Constraint size(long min, long max) {
    return value -> {
      if (value instanceof String s) {
        int length = s.length();
        if (length >= min && length <= max) {
          return null;
        }
        if (max == Long.MAX_VALUE) {
          return "must be at least " + min + " characters, got " + length;
        }
        return (min > 0 ? "must be " + min + " to " + max : "must be at most " + max)
            + " characters, got "
            + length;
      }
      int entries =
          value instanceof Collection<?> c
              ? c.size()
              : value instanceof Map<?, ?> m ? m.size() : -1;
      if (entries < 0 || (entries >= min && entries <= max)) {
        return null;
      }
      return entries < min
          ? "must have at least " + min + (min == 1 ? " entry" : " entries")
          : "at most " + max + " entries";
    };
  }

  private static Constraint pattern(String regex) {
    java.util.regex.Pattern compiled = java.util.regex.Pattern.compile(regex);
    String words = Formats.words(regex);
    return value -> {
      // an OpenAPI pattern matches anywhere in the value, as find() does
      if (!(value instanceof String s) || compiled.matcher(s).find()) {
        return null;
      }
      return regex.equals(Formats.NOT_BLANK) ? words : "'" + s + "' " + words;
    };
  }

  private static Constraint range(
      Double min, boolean minInclusive, Double max, boolean maxInclusive) {
    return value -> {
      if (!(value instanceof Number n)) {
        return null;
      }
      double v = n.doubleValue();
      boolean low = min != null && (minInclusive ? v < min : v <= min);
      boolean high = max != null && (maxInclusive ? v > max : v >= max);
      if (!low && !high) {
        return null;
      }
      String lower = min == null ? null : (minInclusive ? "" : "greater than ") + bound(min);
      String upper = max == null ? null : (maxInclusive ? "" : "less than ") + bound(max);
      if (lower != null && upper != null) {
        return minInclusive && maxInclusive
            ? value + " must be between " + lower + " and " + upper
            : value
                + " must be "
                + (minInclusive ? "at least " : "")
                + lower
                + " and "
                + (maxInclusive ? "at most " : "")
                + upper;
      }
      return lower != null
          ? value + " must be " + (minInclusive ? "at least " : "") + lower
          : value + " must be " + (maxInclusive ? "at most " : "") + upper;
    };
  }

  /** 0.0 as 0: annotations hold doubles, most fields integers. */
  private static String bound(double d) {
    return d == Math.rint(d) ? String.valueOf((long) d) : String.valueOf(d);
  }
}
