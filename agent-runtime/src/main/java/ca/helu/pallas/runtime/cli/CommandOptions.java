package ca.helu.pallas.runtime.cli;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * One command's options, each declared with its help and what it sets, and parsed strictly: an
 * unknown option, a missing value or a value of the wrong kind is a {@link UsageError} naming the
 * option. {@code --name VALUE} and {@code --name=VALUE} both work; a repeated option is applied
 * each time. Written here rather than taken from a library: picocli, which parsed these before,
 * took about 60 ms of an agent pod's start to ready (docs/benchmarks.md, "Images: analysis").
 */
final class CommandOptions {
  /** A mistake on the command line; the message names the option and what is wrong. */
  static final class UsageError extends RuntimeException {
    UsageError(String message) {
      super(message);
    }
  }

  private record Option(List<String> names, String label, String help, Consumer<String> apply) {
    String synopsis() {
      String names = String.join(", ", this.names);
      return label == null ? names : names + " " + label;
    }
  }

  private static final List<String> HELP = List.of("-h", "--help");

  private final String command;
  private final String description;
  private final List<Option> options = new ArrayList<>();

  CommandOptions(String command, String description) {
    this.command = command;
    this.description = description;
  }

  /** An option without a value, e.g. {@code --cluster}; {@code names} like "-f, --file". */
  CommandOptions flag(String names, String help, Runnable set) {
    options.add(new Option(split(names), null, help, value -> set.run()));
    return this;
  }

  /** An option with a value, shown as {@code label} in the help. */
  CommandOptions value(String names, String label, String help, Consumer<String> set) {
    options.add(new Option(split(names), label, help, set));
    return this;
  }

  /**
   * Applies {@code args} in order; false when they ask for help instead (nothing else is then
   * applied). Throws {@link UsageError} on the first mistake.
   */
  boolean parse(List<String> args) {
    if (args.stream().anyMatch(HELP::contains)) {
      return false;
    }
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      int equals = arg.indexOf('=');
      String name = arg.startsWith("--") && equals > 0 ? arg.substring(0, equals) : arg;
      Option option = find(name);
      if (option.label == null) {
        if (!name.equals(arg)) {
          throw new UsageError(name + " takes no value");
        }
        option.apply.accept(null);
      } else if (!name.equals(arg)) {
        option.apply.accept(arg.substring(equals + 1));
      } else if (i + 1 < args.size()) {
        option.apply.accept(args.get(++i));
      } else {
        throw new UsageError(name + " needs a value (" + option.label + ")");
      }
    }
    return true;
  }

  private Option find(String name) {
    for (Option option : options) {
      if (option.names.contains(name)) {
        return option;
      }
    }
    if (!name.startsWith("-")) {
      throw new UsageError("unexpected argument '" + name + "'");
    }
    throw new UsageError("unknown option '" + name + "'");
  }

  /** The help text: a usage line, the description and every option. */
  String help() {
    List<Option> all = new ArrayList<>(options);
    all.add(new Option(HELP, null, "Show this help and exit", value -> {}));
    int width = all.stream().mapToInt(o -> o.synopsis().length()).max().orElse(0) + 2;
    StringBuilder out = new StringBuilder();
    out.append("Usage: pallas-agent-runtime ").append(command).append(" [OPTIONS]\n");
    out.append(description).append("\n\nOptions:\n");
    for (Option option : all) {
      out.append("  ").append(String.format("%-" + width + "s", option.synopsis()));
      out.append(option.help).append('\n');
    }
    return out.toString();
  }

  /** Every option's names, in the order declared (docs/configuration.md lists them all). */
  List<List<String>> names() {
    return options.stream().map(Option::names).toList();
  }

  /** {@code text} as a whole number, or a usage error naming {@code option}. */
  static int intValue(String option, String text) {
    return (int) number(option, text, Integer.MIN_VALUE, Integer.MAX_VALUE);
  }

  static long longValue(String option, String text) {
    return number(option, text, Long.MIN_VALUE, Long.MAX_VALUE);
  }

  private static long number(String option, String text, long min, long max) {
    long value;
    try {
      value = Long.parseLong(text.strip());
    } catch (NumberFormatException e) {
      throw new UsageError(option + ": '" + text + "' is not a whole number");
    }
    if (value < min || value > max) {
      throw new UsageError(option + ": " + value + " is out of range (" + min + " to " + max + ")");
    }
    return value;
  }

  /** {@code text} as one of the enum's constants, written as they are, or a usage error. */
  static <E extends Enum<E>> E enumValue(String option, String text, Class<E> type) {
    try {
      return Enum.valueOf(type, text);
    } catch (IllegalArgumentException e) {
      String allowed =
          Arrays.stream(type.getEnumConstants()).map(Enum::name).collect(Collectors.joining(", "));
      throw new UsageError(option + ": '" + text + "' is not one of " + allowed);
    }
  }

  private static List<String> split(String names) {
    return Arrays.stream(names.split(",")).map(String::strip).toList();
  }
}
