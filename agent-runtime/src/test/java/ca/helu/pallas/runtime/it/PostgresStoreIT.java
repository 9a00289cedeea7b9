package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.InstanceScope;
import ca.helu.pallas.runtime.store.AgentHistories;
import ca.helu.pallas.runtime.store.HistoryBounds;
import ca.helu.pallas.runtime.store.PostgresStore;
import ca.helu.pallas.runtime.store.StoreConfig;
import ca.helu.pallas.runtime.store.StoreException;
import ca.helu.pallas.runtime.testing.PostgresServer;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.ImageContent;
import dev.langchain4j.data.message.TextContent;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The PostgreSQL store on a real PostgreSQL (issue 17 §1): messages of every kind round-trip, a
 * turn is appended whole or not at all, the oldest whole turns past the bound are deleted in the
 * store, the time to live is enforced by the store, DELETE of a session deletes its history, and a
 * second process on the same database sees the same conversations. A store whose schema is current
 * is left alone (only a replica that finds it older runs Flyway), and one a release behind is
 * brought to the newest schema.
 */
class PostgresStoreIT {
  @RegisterExtension static final PostgresServer PG = new PostgresServer();

  private final List<PostgresStore> opened = new ArrayList<>();
  private String url;

  @BeforeEach
  void database() throws Exception {
    url = PG.newDatabase();
  }

  @AfterEach
  void closeStores() {
    opened.forEach(PostgresStore::close);
  }

  private PostgresStore store(StoreConfig config) {
    PostgresStore store = new PostgresStore(config, "fleet", up -> {});
    opened.add(store);
    return store;
  }

  private StoreConfig config() {
    return StoreConfig.of(url, PostgresServer.USER, PostgresServer.PASSWORD);
  }

  private static AgentHistories agent(PostgresStore store, InstanceScope scope, long bound) {
    return store.forAgent("a", scope, new HistoryBounds(bound, bound, Duration.ofMinutes(30)));
  }

  private static List<ChatMessage> turn(String user, String answer) {
    return List.of(UserMessage.from(user), AiMessage.from(answer));
  }

  private static List<String> texts(List<ChatMessage> messages) {
    return messages.stream()
        .map(m -> m instanceof UserMessage u ? u.singleText() : ((AiMessage) m).text())
        .toList();
  }

  @Test
  void textImagesAndToolCallsRoundTrip() throws Exception {
    AgentHistories histories = agent(store(config()), InstanceScope.CONNECTION, 1_000_000);
    String png = Base64.getEncoder().encodeToString(new byte[] {(byte) 0x89, 'P', 'N', 'G', 1, 2});
    ToolExecutionRequest call =
        ToolExecutionRequest.builder()
            .id("call-1")
            .name("argos__search")
            .arguments("{\"q\":\"é ünïcode\"}")
            .build();
    List<ChatMessage> turn =
        List.of(
            UserMessage.from(TextContent.from("look: ✓"), ImageContent.from(png, "image/png")),
            AiMessage.from("let me search", List.of(call)),
            ToolExecutionResultMessage.from(call, "found 3"),
            AiMessage.from("three"));

    histories.append("s1", null, turn);

    assertThat(histories.read("s1")).isEqualTo(turn);
    assertThat(histories.read("s2")).isEmpty();
  }

  @Test
  void theOldestWholeTurnsGoPastTheBoundInTheStore() throws Exception {
    AgentHistories histories = agent(store(config()), InstanceScope.SHARED, 100);
    histories.append(null, null, turn("a".repeat(30), "b".repeat(10)));
    histories.append(null, null, turn("c".repeat(30), "d".repeat(10)));
    assertThat(histories.read(null)).hasSize(4); // read once: the process keeps them parsed
    // 120 > 100: the first turn goes, user message and answer together
    histories.append(null, null, turn("e".repeat(30), "f".repeat(10)));
    assertThat(texts(histories.read(null)))
        .containsExactly("c".repeat(30), "d".repeat(10), "e".repeat(30), "f".repeat(10));
    assertThat(rows("SELECT count(*) FROM pallas_turn")).isEqualTo(2);
    assertThat(rows("SELECT chars FROM pallas_conversation")).isEqualTo(80);

    // a turn larger than the bound is not kept, nor anything before it
    histories.append(null, null, turn("x".repeat(500), "y"));
    assertThat(histories.read(null)).isEmpty();
    assertThat(rows("SELECT count(*) FROM pallas_turn")).isZero();
  }

  /**
   * Reads take only the turns after those a process holds parsed, and appends keep the totals
   * without summing every turn (V4): through two processes' appends and the bound's trimming, each
   * read is still the newest turns in order, and the stored total is the turns' sum.
   */
  @Test
  void readsThatTakeOnlyNewerTurnsSeeTheWholeTrimmedConversation() throws Exception {
    AgentHistories here = agent(store(config()), InstanceScope.CONNECTION, 100);
    AgentHistories there = agent(store(config()), InstanceScope.CONNECTION, 100);
    List<String> expected = new ArrayList<>();
    for (int n = 0; n < 30; n++) {
      // 20 to 40 characters a turn: between two and five turns fit in the bound
      String asked = "q" + n + "-".repeat(10 + (n * 7) % 20);
      (n % 3 == 0 ? there : here).append("s", null, turn(asked, "a" + n));
      expected.add(asked);
      expected.add("a" + n);
      long size = 0;
      int keep = expected.size();
      while (keep > 0
          && size + expected.get(keep - 2).length() + expected.get(keep - 1).length() <= 100) {
        size += expected.get(keep - 2).length() + expected.get(keep - 1).length();
        keep -= 2;
      }
      expected.subList(0, keep).clear();
      assertThat(texts(here.read("s"))).as("after turn %d", n).isEqualTo(expected);
      assertThat(rows("SELECT chars FROM pallas_conversation"))
          .isEqualTo(rows("SELECT sum(chars) FROM pallas_turn"))
          .isEqualTo(size);
    }
  }

  @Test
  void aTurnIsStoredWholeOrNotAtAll() throws Exception {
    AgentHistories histories = agent(store(config()), InstanceScope.CONNECTION, 1_000_000);
    histories.append("s1", null, turn("first", "one"));
    // the last statement of an append fails: its turn, already inserted, must not stay
    PostgresServer.sql(
        url,
        "CREATE FUNCTION fail() RETURNS trigger LANGUAGE plpgsql AS"
            + " $$ BEGIN IF NEW.chars > 100 THEN RAISE EXCEPTION 'disk full'; END IF;"
            + " RETURN NEW; END $$");
    PostgresServer.sql(
        url,
        "CREATE TRIGGER fail BEFORE UPDATE OF chars ON pallas_conversation FOR EACH ROW"
            + " EXECUTE FUNCTION fail()");

    assertThatThrownBy(() -> histories.append("s1", null, turn("x".repeat(200), "two")))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("could not store the turn")
        .hasMessageNotContaining("disk full");

    assertThat(texts(histories.read("s1"))).containsExactly("first", "one");
    assertThat(rows("SELECT count(*) FROM pallas_turn")).isEqualTo(1);
  }

  @Test
  void expiredConversationsAreNeverReadAndAreSwept() throws Exception {
    AgentHistories histories =
        agent(
            store(
                config()
                    .withTtl(Duration.ofMinutes(10))
                    .withIntervals(Duration.ofMillis(200), Duration.ofSeconds(5))),
            InstanceScope.CONNECTION,
            1_000_000);
    histories.append("old", null, turn("old", "1"));
    histories.append("new", null, turn("new", "2"));
    PostgresServer.sql(
        url,
        "UPDATE pallas_conversation SET last_turn_at = now() - interval '11 minutes'"
            + " WHERE session_id = 'old'");

    assertThat(histories.read("old")).isEmpty();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> rows("SELECT count(*) FROM pallas_conversation") == 1);
    assertThat(rows("SELECT count(*) FROM pallas_turn")).isEqualTo(1);
    assertThat(texts(histories.read("new"))).containsExactly("new", "2");
    await().atMost(Duration.ofSeconds(10)).until(() -> histories.held() == 1);
  }

  @Test
  void anExpiredConversationNotYetSweptStartsAfresh() throws Exception {
    AgentHistories histories =
        agent(store(config().withTtl(Duration.ofMinutes(10))), InstanceScope.CONNECTION, 1000);
    histories.append("s", null, turn("before", "1"));
    assertThat(texts(histories.read("s"))).containsExactly("before", "1");
    PostgresServer.sql(
        url, "UPDATE pallas_conversation SET last_turn_at = now() - interval '11 minutes'");
    histories.append("s", null, turn("after", "2"));
    assertThat(texts(histories.read("s"))).containsExactly("after", "2");
  }

  @Test
  void aConversationDeletedElsewhereAndStartedAgainIsReadAnew() throws Exception {
    AgentHistories here = agent(store(config()), InstanceScope.CONNECTION, 1000);
    AgentHistories there = agent(store(config()), InstanceScope.CONNECTION, 1000);
    here.append("s", null, turn("old", "1"));
    assertThat(texts(here.read("s"))).containsExactly("old", "1");
    there.delete("s");
    there.append("s", null, turn("new", "2")); // the same turn number in a new conversation
    assertThat(texts(here.read("s"))).containsExactly("new", "2");
  }

  @Test
  void deletingASessionDeletesItsHistoryOnly() throws Exception {
    AgentHistories histories = agent(store(config()), InstanceScope.CONNECTION, 1000);
    histories.append("s1", null, turn("one", "1"));
    histories.append("s2", null, turn("two", "2"));
    histories.delete("s1");
    assertThat(histories.read("s1")).isEmpty();
    assertThat(texts(histories.read("s2"))).containsExactly("two", "2");
    assertThat(rows("SELECT count(*) FROM pallas_turn")).isEqualTo(1);
  }

  @Test
  void anotherProcessOnTheSameDatabaseContinuesTheSameConversations() throws Exception {
    AgentHistories here = agent(store(config()), InstanceScope.CONNECTION, 1000);
    AgentHistories there = agent(store(config()), InstanceScope.CONNECTION, 1000);
    here.append("s1", null, turn("asked here", "1"));
    assertThat(texts(there.read("s1"))).containsExactly("asked here", "1");
    there.append("s1", null, turn("asked there", "2"));
    assertThat(texts(here.read("s1"))).containsExactly("asked here", "1", "asked there", "2");
    assertThat(there.read("s1")).isEqualTo(here.read("s1"));
  }

  @Test
  void aSharedConversationIsHeldByOneProcessAtATime() throws Exception {
    AgentHistories here = agent(store(config()), InstanceScope.SHARED, 1000);
    AgentHistories there = agent(store(config()), InstanceScope.SHARED, 1000);
    var first = new ca.helu.pallas.runtime.loop.Cancellation();
    AgentHistories.Hold hold = here.hold(null, first, () -> {});
    AtomicBoolean told = new AtomicBoolean();
    AtomicBoolean taken = new AtomicBoolean();
    Thread waiter =
        Thread.startVirtualThread(() -> {
          try (AgentHistories.Hold second =
              there.hold(
                  null, new ca.helu.pallas.runtime.loop.Cancellation(), () -> told.set(true))) {
            taken.set(true);
          } catch (Exception e) {
            throw new AssertionError(e);
          }
        });
    await().atMost(Duration.ofSeconds(10)).untilTrue(told);
    // waits past one bounded wait of PostgreSQL's lock queue, and still has not taken it
    await().pollDelay(Duration.ofMillis(2500)).atMost(Duration.ofSeconds(5)).until(() -> true);
    assertThat(taken).isFalse();
    hold.close();
    await().atMost(Duration.ofSeconds(10)).untilTrue(taken);
    waiter.join(10_000);
  }

  @Test
  void aStoreWithWrongCredentialsNamesNeitherThemNorItsUser() throws Exception {
    AgentHistories histories =
        agent(
            store(StoreConfig.of(url, PostgresServer.USER, "wrong-password-123")),
            InstanceScope.CONNECTION,
            1000);
    assertThatThrownBy(() -> histories.read("s"))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("PostgreSQL 127.0.0.1:" + PG.port())
        .hasMessageContaining("refused the credentials")
        .hasMessageNotContaining("wrong-password-123")
        .hasMessageNotContaining("\"" + PostgresServer.USER + "\"");
  }

  @Test
  void aStoreWhoseSchemaIsCurrentIsNotMigratedAgain() throws Exception {
    agent(store(config()), InstanceScope.CONNECTION, 1000).append("s1", null, turn("a", "1"));
    // a replica that ran Flyway now would find this and refuse to start its store
    PostgresServer.sql(url, "UPDATE pallas_schema_history SET checksum = checksum + 1");
    assertThatThrownBy(() -> flyway().load().validate()).hasMessageContaining("checksum mismatch");

    AgentHistories another = agent(store(config()), InstanceScope.CONNECTION, 1000);
    another.append("s1", null, turn("b", "2"));
    assertThat(texts(another.read("s1"))).containsExactly("a", "1", "b", "2");
  }

  @Test
  void aStoreAReleaseBehindIsMigratedToTheNewestSchema() throws Exception {
    flyway().target("4").load().migrate();
    assertThat(rows("SELECT max(version::int) FROM pallas_schema_history")).isEqualTo(4);

    AgentHistories histories = agent(store(config()), InstanceScope.CONNECTION, 1000);
    histories.append("s1", null, turn("a", "1"));
    assertThat(texts(histories.read("s1"))).containsExactly("a", "1");
    assertThat(rows("SELECT max(version::int) FROM pallas_schema_history WHERE success"))
        .isEqualTo(5);
  }

  /** Flyway as the store configures it, on this test's database. */
  private FluentConfiguration flyway() {
    return Flyway.configure()
        .dataSource(url, PostgresServer.USER, PostgresServer.PASSWORD)
        .locations("classpath:db/migration")
        .table("pallas_schema_history");
  }

  private long rows(String query) throws Exception {
    try (Connection c =
            DriverManager.getConnection(url, PostgresServer.USER, PostgresServer.PASSWORD);
        Statement s = c.createStatement();
        ResultSet r = s.executeQuery(query)) {
      r.next();
      return r.getLong(1);
    }
  }
}
