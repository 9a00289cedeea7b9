package ca.helu.pallas.runtime.registry;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import org.junit.jupiter.api.Test;

class ToolSearchTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static IndexedTool tool(String owner, String json) throws Exception {
    JsonNode node = JSON.readTree(json);
    return IndexedTool.of(owner, IndexedTool.SERVER, node);
  }

  private static ToolSearch search() throws Exception {
    return new ToolSearch(
        List.of(
            tool(
                "weather",
                """
                {"name":"getForecast","description":"The weather forecast for a city",
                 "inputSchema":{"type":"object","properties":{
                   "city":{"type":"string","description":"Name of the city"}}}}\
                """),
            tool(
                "mail",
                """
                {"name":"send_email","title":"Send an email",
                 "description":"Sends a message to one or more recipients",
                 "inputSchema":{"type":"object","properties":{
                   "to":{"type":"string","description":"Addresses of the recipients"}}}}\
                """),
            tool(
                "mail",
                """
                {"name":"list_folders","description":"Lists the mailbox folders",
                 "inputSchema":{"type":"object"}}\
                """),
            tool(
                "calc",
                """
                {"name":"get-sum","description":"Returns the sum of two numbers",
                 "inputSchema":{"type":"object","properties":{
                   "a":{"type":"number","description":"First number"}}}}\
                """)));
  }

  @Test
  void wordsAreSplitAtCaseAndPunctuationStemmedAndStopWordsLeftOut() {
    assertThat(ToolSearch.words("getForecast of the send_email Cities"))
        .containsExactly("get", "forecast", "send", "email", "city");
    assertThat(ToolSearch.words("echoes lists listing")).containsExactly("echo", "list", "list");
  }

  @Test
  void theToolWhoseWordsFitTheIntentComesFirst() throws Exception {
    ToolSearch search = search();
    assertThat(search.find("what is the forecast in Paris", 3).get(0).tool().name())
        .isEqualTo("weather/getForecast");
    assertThat(search.find("email my recipients", 3).get(0).tool().name())
        .isEqualTo("mail/send_email");
    assertThat(search.find("the sum of two numbers", 3).get(0).tool().name())
        .isEqualTo("calc/get-sum");
    // an argument's description counts: "city" is only in getForecast's argument
    assertThat(search.find("which city", 3))
        .extracting(h -> h.tool().name())
        .containsExactly("weather/getForecast");
  }

  @Test
  void scoresAreOrderedAndLimitedAndNothingMatchesNothing() throws Exception {
    ToolSearch search = search();
    List<ToolSearch.Hit> hits = search.find("send email list folders", 10);
    assertThat(hits).hasSize(2);
    assertThat(hits.get(0).score()).isGreaterThanOrEqualTo(hits.get(1).score());
    assertThat(search.find("send email list folders", 1)).hasSize(1);
    assertThat(search.find("the of and", 5)).isEmpty();
    assertThat(search.find("zebra", 5)).isEmpty();
    assertThat(search.tool("mail/list_folders").toolName()).isEqualTo("list_folders");
    assertThat(search.tool("mail/nothing")).isNull();
  }
}
