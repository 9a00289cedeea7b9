package ca.helu.pallas.runtime.testing;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Tools for the registry's benchmarks: {@code {verb}_{noun}} tools of a made-up business system,
 * described in plain words with two described arguments, as real servers describe theirs; and
 * queries of intent over the same words.
 */
public final class GeneratedTools {
  static final String[] VERBS = {
    "get",
    "list",
    "create",
    "delete",
    "update",
    "search",
    "send",
    "read",
    "export",
    "import",
    "resize",
    "translate",
    "summarize",
    "book",
    "cancel",
    "schedule",
    "convert",
    "validate",
    "archive",
    "share"
  };
  static final String[] NOUNS = {
    "invoice",
    "customer",
    "order",
    "ticket",
    "email",
    "calendar_event",
    "file",
    "image",
    "report",
    "contact",
    "hotel_room",
    "flight",
    "payment",
    "product",
    "user",
    "repository",
    "issue",
    "message",
    "document",
    "metric"
  };
  static final String[] SYSTEMS = {
    "billing", "crm", "helpdesk", "mail", "storage", "travel", "analytics", "shop", "wiki", "ops"
  };

  private GeneratedTools() {}

  /** {@code count} distinct tools of server number {@code server}. */
  public static List<McpSchema.Tool> of(int server, int count) {
    List<McpSchema.Tool> tools = new ArrayList<>(count);
    String system = SYSTEMS[server % SYSTEMS.length];
    for (int i = 0; i < count; i++) {
      String verb = VERBS[i % VERBS.length];
      String noun = NOUNS[(i / VERBS.length) % NOUNS.length];
      String words = noun.replace('_', ' ');
      String name = verb + "_" + noun + (i < 400 ? "" : "_" + i / 400);
      tools.add(
          McpSchema.Tool.builder()
              .name(name)
              .description(
                  capital(verb)
                      + " a "
                      + words
                      + " in the "
                      + system
                      + " system; answers with the "
                      + words
                      + "'s id and status.")
              .inputSchema(
                  McpJsonDefaults.getMapper(),
                  ("{\"type\":\"object\",\"properties\":{"
                          + "\"id\":{\"type\":\"string\",\"description\":\"The %s's identifier\"},"
                          + "\"query\":{\"type\":\"string\",\"description\":\"Words to find %ss by\"}}}")
                      .formatted(words, words))
              .build());
    }
    return tools;
  }

  /** {@code count} queries of intent such as "please cancel the flight to Paris". */
  public static List<String> queries(int count, long seed) {
    Random random = new Random(seed);
    String[] fillers = {"please", "I need to", "how do I", "", "quickly", "for the team"};
    List<String> queries = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      queries.add(
          fillers[random.nextInt(fillers.length)]
              + " "
              + VERBS[random.nextInt(VERBS.length)]
              + " the "
              + NOUNS[random.nextInt(NOUNS.length)].replace('_', ' ')
              + " of customer "
              + random.nextInt(1000));
    }
    return queries;
  }

  private static String capital(String word) {
    return Character.toUpperCase(word.charAt(0)) + word.substring(1);
  }
}
