package ca.helu.pallas.runtime;

import java.util.Optional;

/** Walking an exception's chain of causes, in one place (cycles and depth bounded). */
public final class Causes {
  private static final int MAX_DEPTH = 32;

  private Causes() {}

  /** The first exception of {@code type} in {@code e}'s chain, {@code e} included. */
  public static <T extends Throwable> Optional<T> find(Throwable e, Class<T> type) {
    int depth = 0;
    for (Throwable t = e; t != null && depth++ < MAX_DEPTH; t = next(t)) {
      if (type.isInstance(t)) {
        return Optional.of(type.cast(t));
      }
    }
    return Optional.empty();
  }

  /** Whether {@code e}'s chain holds an exception of any of these types. */
  @SafeVarargs
  public static boolean any(Throwable e, Class<? extends Throwable>... types) {
    for (Class<? extends Throwable> type : types) {
      if (find(e, type).isPresent()) {
        return true;
      }
    }
    return false;
  }

  /** The deepest cause. */
  public static Throwable root(Throwable e) {
    Throwable root = e;
    int depth = 0;
    while (next(root) != null && depth++ < MAX_DEPTH) {
      root = next(root);
    }
    return root;
  }

  private static Throwable next(Throwable t) {
    Throwable cause = t.getCause();
    return cause == t ? null : cause;
  }
}
