package ca.helu.pallas.runtime.registry;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;

/**
 * Ranks the fleet's tools for a query of a few words of intent (docs/runtime.md, "The registry's
 * MCP endpoint"): BM25 over each tool's words, weighted by where they stand (its name and title
 * count three and two times, its description and its arguments' names and descriptions once), words
 * split at case changes and punctuation, lower-cased and reduced by a light stemmer, common English
 * words left out. Built once per change of the fleet's tools and then only read: a query costs one
 * look-up per word in an inverted index and a pass over the tools that hold one of them.
 */
final class ToolSearch {
  private static final double K1 = 1.2;
  private static final double B = 0.75;
  private static final Set<String> STOP =
      Set.of(
          "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "i", "if", "in", "into",
          "is", "it", "its", "me", "my", "of", "on", "or", "that", "the", "this", "to", "was",
          "what", "when", "which", "with", "you", "your", "want", "need", "please", "can", "some");

  /** A tool found, with its score. */
  record Hit(IndexedTool tool, double score) {}

  private final List<IndexedTool> tools;
  private final Map<String, IndexedTool> byName = new HashMap<>();
  private final int[] lengths;
  private final double averageLength;
  // word -> postings: tool index and the word's weighted count in it
  private final Map<String, int[][]> postings;

  ToolSearch(List<IndexedTool> tools) {
    this.tools = List.copyOf(tools);
    this.tools.forEach(t -> byName.putIfAbsent(t.name(), t));
    this.lengths = new int[this.tools.size()];
    Map<String, List<int[]>> building = new HashMap<>();
    long total = 0;
    for (int i = 0; i < this.tools.size(); i++) {
      Map<String, Integer> counts = new LinkedHashMap<>();
      int length = addWords(counts, this.tools.get(i));
      lengths[i] = length;
      total += length;
      for (Map.Entry<String, Integer> e : counts.entrySet()) {
        building
            .computeIfAbsent(e.getKey(), k -> new ArrayList<>())
            .add(new int[] {i, e.getValue()});
      }
    }
    this.averageLength = this.tools.isEmpty() ? 1 : Math.max(1, (double) total / this.tools.size());
    this.postings = new HashMap<>(building.size() * 2);
    building.forEach((word, list) -> postings.put(word, list.toArray(new int[0][])));
  }

  int size() {
    return tools.size();
  }

  List<IndexedTool> tools() {
    return tools;
  }

  /** The tool of this fully qualified name, or null. */
  IndexedTool tool(String name) {
    return byName.get(name);
  }

  /** The weighted words of a tool into {@code counts}; returns their weighted number. */
  private static int addWords(Map<String, Integer> counts, IndexedTool t) {
    JsonNode tool = t.tool();
    int length = 0;
    length += add(counts, tool.path("name").asText(""), 3);
    length += add(counts, tool.path("title").asText(""), 2);
    length += add(counts, tool.path("description").asText(""), 1);
    JsonNode properties = tool.path("inputSchema").path("properties");
    for (Map.Entry<String, JsonNode> property : properties.properties()) {
      length += add(counts, property.getKey(), 1);
      length += add(counts, property.getValue().path("description").asText(""), 1);
    }
    length += add(counts, t.owner(), 1);
    return length;
  }

  private static int add(Map<String, Integer> counts, String text, int weight) {
    int n = 0;
    for (String word : words(text)) {
      counts.merge(word, weight, Integer::sum);
      n += weight;
    }
    return n;
  }

  /** The words BM25 counts: split, lower-cased, stemmed, without stop words. */
  static List<String> words(String text) {
    List<String> out = new ArrayList<>();
    StringBuilder word = new StringBuilder();
    char previous = ' ';
    for (int i = 0; i <= text.length(); i++) {
      char c = i < text.length() ? text.charAt(i) : ' ';
      boolean letterOrDigit = Character.isLetterOrDigit(c);
      // a new word at a change from lower to upper case: getWeather, listTools
      boolean caseBreak =
          letterOrDigit && Character.isUpperCase(c) && Character.isLowerCase(previous);
      if (!letterOrDigit || caseBreak) {
        finish(word, out);
      }
      if (letterOrDigit) {
        word.append(Character.toLowerCase(c));
      }
      previous = c;
    }
    return out;
  }

  private static void finish(StringBuilder word, List<String> out) {
    if (word.isEmpty()) {
      return;
    }
    String w = word.toString();
    word.setLength(0);
    if (!STOP.contains(w)) {
      out.add(stem(w));
    }
  }

  /** A light suffix stemmer: plurals, -ing and -ed, enough for "echoes"/"echo", "lists"/"list". */
  static String stem(String w) {
    if (w.length() > 4 && w.endsWith("ies")) {
      return w.substring(0, w.length() - 3) + "y";
    }
    if (w.length() > 5
        && (w.endsWith("sses")
            || w.endsWith("ches")
            || w.endsWith("shes")
            || w.endsWith("xes")
            || w.endsWith("oes"))) {
      return w.substring(0, w.length() - 2);
    }
    if (w.length() > 3 && w.endsWith("s") && !w.endsWith("ss") && !w.endsWith("us")) {
      return w.substring(0, w.length() - 1);
    }
    if (w.length() > 5 && w.endsWith("ing")) {
      return w.substring(0, w.length() - 3);
    }
    if (w.length() > 4 && w.endsWith("ed")) {
      return w.substring(0, w.length() - 2);
    }
    return w.toLowerCase(Locale.ROOT);
  }

  /** The {@code limit} best tools for {@code query}, best first; none when no word matches. */
  List<Hit> find(String query, int limit) {
    List<String> words = words(query);
    Map<Integer, Double> scores = new HashMap<>();
    int n = tools.size();
    for (String word : Set.copyOf(words)) {
      int[][] list = postings.get(word);
      if (list == null) {
        continue;
      }
      double idf = Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5));
      for (int[] posting : list) {
        double tf = posting[1];
        double norm = K1 * (1 - B + B * lengths[posting[0]] / averageLength);
        scores.merge(posting[0], idf * tf * (K1 + 1) / (tf + norm), Double::sum);
      }
    }
    PriorityQueue<Map.Entry<Integer, Double>> best =
        new PriorityQueue<>(Map.Entry.comparingByValue());
    for (Map.Entry<Integer, Double> e : scores.entrySet()) {
      best.add(e);
      if (best.size() > limit) {
        best.poll();
      }
    }
    List<Hit> hits = new ArrayList<>(best.size());
    while (!best.isEmpty()) {
      var e = best.poll();
      hits.add(new Hit(tools.get(e.getKey()), e.getValue()));
    }
    hits.sort(
        Comparator.comparingDouble(Hit::score).reversed().thenComparing(h -> h.tool().name()));
    return hits;
  }
}
