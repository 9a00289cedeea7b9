package ca.helu.pallas.api;

import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The model strings a manifest may name (docs/configuration.md, "Models"): {@code provider.model}
 * for each {@link Provider}, or one of the built-in test models. The one place their names are
 * spelled: the schema's pattern, the validator's message, the operator and the runtime read them
 * here.
 */
public final class Models {
  public static final String OPENAI = "openai";
  public static final String ANTHROPIC = "anthropic";
  public static final String PASSTHROUGH = "passthrough";
  public static final String PLAYBACK = "playback";
  public static final String SLOW = "slow";

  /**
   * A model string. An annotation takes only a constant, so this spells the names above rather than
   * joining {@link Provider#values()} (ModelsTest holds the two to each other).
   */
  public static final String PATTERN =
      "^("
          + PASSTHROUGH
          + "|"
          + PLAYBACK
          + "|"
          + SLOW
          + "|("
          + OPENAI
          + "|"
          + ANTHROPIC
          + ")\\.[A-Za-z0-9._:/@-]+)$";

  /** The built-in test models, which need no network (docs/runtime.md, "Models"). */
  public static final List<String> BUILT_IN = List.of(PASSTHROUGH, PLAYBACK, SLOW);

  private Models() {}

  public static boolean isBuiltIn(String model) {
    return BUILT_IN.contains(model);
  }

  /** What a model string may be, in words: "openai.&lt;model&gt;, ..., playback or slow". */
  public static String choices() {
    List<String> all =
        Stream.concat(
                Arrays.stream(Provider.values()).map(p -> p.id() + ".<model>"), BUILT_IN.stream())
            .toList();
    return all.subList(0, all.size() - 1).stream().collect(Collectors.joining(", "))
        + " or "
        + all.get(all.size() - 1);
  }
}
