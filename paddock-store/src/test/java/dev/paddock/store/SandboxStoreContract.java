package dev.paddock.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import dev.paddock.api.LifetimeAction;
import dev.paddock.api.Page;
import dev.paddock.api.PageRequest;
import dev.paddock.api.Resources;
import dev.paddock.api.SandboxFilter;
import dev.paddock.api.SandboxSettings;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.RuntimeHandle;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What every {@link SandboxStore} does, whatever database is underneath. A subclass supplies a
 * fresh database per test; the store is opened on it before each test and closed after.
 */
public abstract class SandboxStoreContract {
  /** A time with sub-millisecond digits, to show the store keeps milliseconds consistently. */
  protected static final Instant T0 = Instant.parse("2026-01-01T00:00:00.123456Z");

  protected TestDatabase database;
  protected SandboxStore store;

  /** A new, empty database; the contract closes it after the test. */
  protected abstract TestDatabase createDatabase();

  /** SQL that makes inserting an event whose JSON equals {@code poison} fail (a trigger). */
  protected abstract List<String> rejectEventSql(String poison);

  @BeforeEach
  void openStore() {
    database = createDatabase();
    store = open(database);
  }

  @AfterEach
  void closeStore() {
    try {
      if (store != null) {
        store.close();
      }
    } finally {
      if (database != null) {
        database.close();
      }
    }
  }

  // The start queue

  private static QueueEntry entry(String id, Optional<String> owner, Instant joined) {
    return new QueueEntry(
        id, owner, 0, joined, joined.plusSeconds(60), "cp-a", joined.plusSeconds(15));
  }

  @Test
  void queueListsEntriesByTurnThenOldestFirstAsStored() {
    Instant t1 = T0.plusSeconds(1).truncatedTo(ChronoUnit.MILLIS);
    Instant t2 = T0.plusSeconds(2).truncatedTo(ChronoUnit.MILLIS);
    QueueEntry laterTurn =
        new QueueEntry("q-c", Optional.of("carol"), 1, T0, T0.plusSeconds(60), "cp-a", T0);
    store.enqueue(laterTurn);
    store.enqueue(entry("q-b", Optional.of("bob"), T0.plusSeconds(2)));
    store.enqueue(entry("q-a", Optional.empty(), T0.plusSeconds(1)));

    assertThat(store.queue())
        .containsExactly(
            entry("q-a", Optional.empty(), t1),
            entry("q-b", Optional.of("bob"), t2),
            new QueueEntry(
                "q-c",
                Optional.of("carol"),
                1,
                T0.truncatedTo(ChronoUnit.MILLIS),
                T0.plusSeconds(60).truncatedTo(ChronoUnit.MILLIS),
                "cp-a",
                T0.truncatedTo(ChronoUnit.MILLIS)));
  }

  @Test
  void queueingAQueuedIdAgainConflicts() {
    store.enqueue(entry("q-1", Optional.of("alice"), T0));

    assertThatThrownBy(() -> store.enqueue(entry("q-1", Optional.of("bob"), T0)))
        .isInstanceOf(ConflictException.class);
    assertThat(store.queue()).extracting(QueueEntry::owner).containsExactly(Optional.of("alice"));
  }

  @Test
  void renewingLeasesMovesOnlyTheHoldersNamedEntries() {
    store.enqueue(entry("mine", Optional.of("alice"), T0));
    store.enqueue(entry("other", Optional.of("alice"), T0.plusSeconds(1)));
    store.enqueue(
        new QueueEntry(
            "theirs", Optional.empty(), 0, T0, T0.plusSeconds(60), "cp-b", T0.plusSeconds(15)));
    Instant later = T0.plusSeconds(100).truncatedTo(ChronoUnit.MILLIS);

    int moved = store.renewQueueLeases("cp-a", List.of("mine", "theirs", "gone"), later);

    assertThat(moved).isEqualTo(1);
    assertThat(store.queue())
        .extracting(QueueEntry::sandboxId, QueueEntry::leaseUntil)
        .containsExactlyInAnyOrder(
            tuple("mine", later),
            tuple("other", T0.plusSeconds(16).truncatedTo(ChronoUnit.MILLIS)),
            tuple("theirs", T0.plusSeconds(15).truncatedTo(ChronoUnit.MILLIS)));
  }

  @Test
  void dequeueSaysWhetherTheEntryWasThere() {
    store.enqueue(entry("q-1", Optional.of("alice"), T0));

    assertThat(store.dequeue("q-1")).isTrue();
    assertThat(store.dequeue("q-1")).isFalse();
    assertThat(store.queue()).isEmpty();
  }

  // Sandboxes

  @Test
  void insertedSandboxIsFoundAsStored() {
    SandboxRecord inserted =
        store.insert(
            sandbox("sb-1", "alice", T0)
                .withRuntime(
                    Optional.of(
                        new RuntimeHandle(
                            "sb-1",
                            "process",
                            Map.of("pid", "42", "quote\"s", "a\\b\n\u00e9\u2603", "empty", "")))));

    assertThat(inserted.version()).isZero();
    assertThat(inserted.createdAt()).isEqualTo(T0.truncatedTo(ChronoUnit.MILLIS));
    assertThat(store.find("sb-1")).contains(inserted);
    assertThat(inserted.runtime().orElseThrow().attributes())
        .containsEntry("quote\"s", "a\\b\n\u00e9\u2603");
  }

  @Test
  void sandboxWithoutOptionalFieldsRoundTrips() {
    SandboxRecord bare = copyOf(sandbox("x", "alice", T0), "sb-bare");

    SandboxRecord inserted = store.insert(bare);

    assertThat(inserted.ownerUserId()).isEmpty();
    assertThat(store.find("sb-bare")).contains(inserted);
  }

  @Test
  void insertingATakenIdConflicts() {
    store.insert(sandbox("sb-1", "alice", T0));

    assertThatThrownBy(() -> store.insert(sandbox("sb-1", "bob", T0.plusSeconds(1))))
        .isInstanceOf(ConflictException.class)
        .hasMessageContaining("insert sandbox 'sb-1'");
    assertThat(store.find("sb-1").orElseThrow().ownerUserId()).contains("alice");
  }

  @Test
  void unknownSandboxIsAbsent() {
    assertThat(store.find("nope")).isEmpty();
    assertThat(store.findBySessionKeyHash("nope")).isEmpty();
  }

  @Test
  void updateBumpsVersionAndUpdatedAt() {
    SandboxRecord inserted = store.insert(sandbox("sb-1", "alice", T0));
    Instant before = Instant.now().truncatedTo(ChronoUnit.MILLIS);

    SandboxRecord updated =
        store.update(inserted.withStatus(SandboxStatus.RUNNING, Optional.of("up")));

    assertThat(updated.version()).isEqualTo(1);
    assertThat(updated.updatedAt()).isAfterOrEqualTo(before);
    assertThat(updated.createdAt()).isEqualTo(inserted.createdAt());
    assertThat(updated.status()).isEqualTo(SandboxStatus.RUNNING);
    assertThat(store.find("sb-1")).contains(updated);
    assertThat(store.update(updated).version()).isEqualTo(2);
  }

  @Test
  void updateFromAStaleVersionConflicts() {
    SandboxRecord read = store.insert(sandbox("sb-1", "alice", T0));
    SandboxRecord winner = store.update(read.withStatus(SandboxStatus.RUNNING, Optional.empty()));

    assertThatThrownBy(() -> store.update(read.withStatus(SandboxStatus.ERROR, Optional.empty())))
        .isInstanceOf(ConflictException.class)
        .hasMessageContaining("sb-1")
        .hasMessageContaining("version 0");
    assertThat(store.find("sb-1")).contains(winner);
  }

  @Test
  void updateOfADeletedSandboxConflicts() {
    SandboxRecord read = store.insert(sandbox("sb-1", "alice", T0));
    store.delete("sb-1");

    assertThatThrownBy(() -> store.update(read)).isInstanceOf(ConflictException.class);
    assertThat(store.find("sb-1")).isEmpty();
  }

  @Test
  void deleteSaysWhetherTheSandboxWasThere() {
    store.insert(sandbox("sb-1", "alice", T0));

    assertThat(store.delete("sb-1")).isTrue();
    assertThat(store.delete("sb-1")).isFalse();
    assertThat(store.find("sb-1")).isEmpty();
  }

  @Test
  void sandboxIsFoundBySessionKeyHashUntilTheHashIsCleared() {
    SandboxRecord inserted =
        store.insert(sandbox("sb-1", "alice", T0).withSessionKeyHash(Optional.of("hash-1")));
    store.insert(sandbox("sb-2", "alice", T0).withSessionKeyHash(Optional.of("hash-2")));

    assertThat(store.findBySessionKeyHash("hash-1")).contains(inserted);

    SandboxRecord revoked = store.update(inserted.withSessionKeyHash(Optional.empty()));

    assertThat(store.findBySessionKeyHash("hash-1")).isEmpty();
    assertThat(store.find("sb-1")).contains(revoked);
    assertThat(revoked.sessionKeyHash()).isEmpty();
  }

  @Test
  void twoSandboxesCannotShareASessionKeyHash() {
    store.insert(sandbox("sb-1", "alice", T0).withSessionKeyHash(Optional.of("hash")));
    SandboxRecord other = store.insert(sandbox("sb-2", "alice", T0));

    assertThatThrownBy(() -> store.update(other.withSessionKeyHash(Optional.of("hash"))))
        .isInstanceOf(ConflictException.class)
        .hasMessageContaining("update sandbox 'sb-2'");
    assertThatThrownBy(
            () -> store.insert(sandbox("sb-3", "bob", T0).withSessionKeyHash(Optional.of("hash"))))
        .isInstanceOf(ConflictException.class);
    // Any number of sandboxes may have no key at all.
    store.insert(sandbox("sb-4", "bob", T0));
    assertThat(store.findBySessionKeyHash("hash").orElseThrow().id()).isEqualTo("sb-1");
  }

  // Pages

  @Test
  void pagesListNewestFirstWithTiesOrderedById() {
    // Three share a creation time, so page boundaries fall inside a tie.
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      Instant created = T0.plusSeconds(i < 3 ? 0 : i);
      store.insert(sandbox("sb-" + i, "alice", created));
    }
    expected.addAll(List.of("sb-6", "sb-5", "sb-4", "sb-3", "sb-2", "sb-1", "sb-0"));

    assertThat(ids(allPages(Optional.empty(), 2))).isEqualTo(expected);
    assertThat(ids(allPages(Optional.empty(), 100))).isEqualTo(expected);
    assertThat(ids(allPages(Optional.empty(), 1))).isEqualTo(expected);
  }

  @Test
  void lastPageHasNoNextPageId() {
    store.insert(sandbox("sb-1", "alice", T0));
    store.insert(sandbox("sb-2", "alice", T0.plusSeconds(1)));

    Page<SandboxRecord> exact = store.page(Optional.empty(), PageRequest.first(2));
    Page<SandboxRecord> empty = store.page(Optional.of("nobody"), PageRequest.first(5));

    assertThat(exact.items()).hasSize(2);
    assertThat(exact.nextPageId()).isEmpty();
    assertThat(empty.items()).isEmpty();
    assertThat(empty.nextPageId()).isEmpty();
  }

  @Test
  void pagesAreStableWhileSandboxesAreInserted() {
    for (int i = 0; i < 10; i++) {
      store.insert(sandbox("old-" + i, "alice", T0.plusSeconds(i)));
    }
    List<String> seen = new ArrayList<>();
    Page<SandboxRecord> page = store.page(Optional.empty(), PageRequest.first(3));
    seen.addAll(ids(page.items()));
    int inserted = 0;
    while (page.nextPageId().isPresent()) {
      // Newer ones land before the cursor (not this listing); an older one after it (listed).
      store.insert(sandbox("new-" + inserted, "alice", T0.plusSeconds(100 + inserted)));
      inserted++;
      page = store.page(Optional.empty(), new PageRequest(page.nextPageId(), 3));
      seen.addAll(ids(page.items()));
      if (inserted == 2) {
        store.insert(sandbox("older", "alice", T0.minusSeconds(1)));
      }
    }

    List<String> expected = new ArrayList<>();
    IntStream.iterate(9, i -> i >= 0, i -> i - 1).forEach(i -> expected.add("old-" + i));
    expected.add("older");
    assertThat(seen).isEqualTo(expected);
  }

  @Test
  void pageIsScopedToTheOwner() {
    for (int i = 0; i < 5; i++) {
      store.insert(sandbox("a-" + i, "alice", T0.plusSeconds(i)));
      store.insert(sandbox("b-" + i, "bob", T0.plusSeconds(i)));
    }
    store.insert(copyOf(sandbox("x", "alice", T0), "ownerless"));

    assertThat(ids(allPages(Optional.of("alice"), 2)))
        .containsExactly("a-4", "a-3", "a-2", "a-1", "a-0");
    assertThat(ids(allPages(Optional.of("carol"), 2))).isEmpty();
    assertThat(allPages(Optional.empty(), 4)).hasSize(11);
  }

  @Test
  void pageIdNotIssuedByTheStoreIsRejected() {
    for (String bad : List.of("garbage!", "bm9jb2xvbg", "")) {
      assertThatThrownBy(() -> store.page(Optional.empty(), new PageRequest(Optional.of(bad), 5)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("nextPageId");
    }
  }

  @Test
  void withStatusReturnsExactlyThoseStatuses() {
    store.insert(sandbox("s", "alice", T0));
    SandboxRecord running = store.insert(sandbox("r", "alice", T0.plusSeconds(1)));
    store.update(running.withStatus(SandboxStatus.RUNNING, Optional.empty()));
    SandboxRecord paused = store.insert(sandbox("p", "bob", T0.plusSeconds(2)));
    store.update(paused.withStatus(SandboxStatus.PAUSED, Optional.empty()));

    assertThat(ids(store.withStatus(EnumSet.of(SandboxStatus.RUNNING, SandboxStatus.PAUSED))))
        .containsExactlyInAnyOrder("r", "p");
    assertThat(ids(store.withStatus(List.of(SandboxStatus.STARTING)))).containsExactly("s");
    assertThat(store.withStatus(List.of(SandboxStatus.MISSING))).isEmpty();
    assertThat(store.withStatus(List.of())).isEmpty();
  }

  // Users and API keys

  @Test
  void usersAreFoundByIdAndNameAndNamesAreUnique() {
    UserRecord admin = store.insertUser(new UserRecord("u-1", "admin", true, T0));
    UserRecord alice = store.insertUser(new UserRecord("u-2", "alice", false, T0.plusSeconds(1)));

    assertThat(store.findUser("u-1")).contains(admin);
    assertThat(store.findUserByName("alice")).contains(alice);
    assertThat(store.findUser("u-9")).isEmpty();
    assertThat(store.findUserByName("bob")).isEmpty();
    assertThat(store.users()).containsExactly(admin, alice);
    assertThatThrownBy(() -> store.insertUser(new UserRecord("u-3", "alice", false, T0)))
        .isInstanceOf(ConflictException.class)
        .hasMessageContaining("alice");
    assertThatThrownBy(() -> store.insertUser(new UserRecord("u-1", "carol", false, T0)))
        .isInstanceOf(ConflictException.class);
  }

  @Test
  void apiKeysAreFoundByHashAndRevokedOnce() {
    store.insertUser(new UserRecord("u-1", "alice", false, T0));
    ApiKeyRecord key = store.insertApiKey(apiKey("k-1", "u-1", "hash-1", T0));
    ApiKeyRecord other = store.insertApiKey(apiKey("k-2", "u-1", "hash-2", T0.plusSeconds(1)));
    Instant when = T0.plusSeconds(60).truncatedTo(ChronoUnit.MILLIS);

    assertThat(store.findApiKeyByHash("hash-1")).contains(key);
    assertThat(store.apiKeys("u-1")).containsExactly(key, other);
    assertThat(store.revokeApiKey("k-1", when)).isTrue();
    assertThat(store.revokeApiKey("k-1", when.plusSeconds(1))).isFalse();
    assertThat(store.revokeApiKey("k-unknown", when)).isFalse();
    assertThat(store.findApiKeyByHash("hash-1").orElseThrow().revokedAt()).contains(when);
    assertThat(store.findApiKeyByHash("hash-2").orElseThrow().revokedAt()).isEmpty();
  }

  @Test
  void revokingAllKeysOfAUserCountsOnlyLiveOnes() {
    store.insertUser(new UserRecord("u-1", "alice", false, T0));
    store.insertUser(new UserRecord("u-2", "bob", false, T0));
    for (int i = 0; i < 3; i++) {
      store.insertApiKey(apiKey("a-" + i, "u-1", "ha-" + i, T0));
    }
    store.insertApiKey(apiKey("b-0", "u-2", "hb-0", T0));
    store.revokeApiKey("a-0", T0.plusSeconds(1));

    assertThat(store.revokeApiKeys("u-1", T0.plusSeconds(2))).isEqualTo(2);
    assertThat(store.revokeApiKeys("u-1", T0.plusSeconds(3))).isZero();
    assertThat(store.apiKeys("u-1")).allSatisfy(k -> assertThat(k.revokedAt()).isPresent());
    assertThat(store.findApiKeyByHash("ha-0").orElseThrow().revokedAt())
        .contains(T0.plusSeconds(1).truncatedTo(ChronoUnit.MILLIS));
    assertThat(store.apiKeys("u-2"))
        .singleElement()
        .satisfies(k -> assertThat(k.revokedAt()).isEmpty());
  }

  @Test
  void apiKeyHashesAreUniqueAndBelongToAUser() {
    store.insertUser(new UserRecord("u-1", "alice", false, T0));
    store.insertApiKey(apiKey("k-1", "u-1", "hash", T0));

    assertThatThrownBy(() -> store.insertApiKey(apiKey("k-2", "u-1", "hash", T0)))
        .isInstanceOf(ConflictException.class);
    assertThatThrownBy(() -> store.insertApiKey(apiKey("k-3", "u-unknown", "other", T0)))
        .isInstanceOf(ConflictException.class)
        .hasMessageContaining("u-unknown");
  }

  // Webhook events and conversations

  @Test
  void eventsAreNumberedInOrderAndReadAfterASequence() {
    List<WebhookEvent> first = append("sb-1", "conv-1", "{\"a\":1}", "{\"b\":2}").stored();
    append("sb-2", "conv-2", "{\"other\":true}");
    List<WebhookEvent> second = append("sb-1", "conv-1", "{\"c\":3}").stored();

    List<WebhookEvent> all = store.events("conv-1", 0, 100);
    assertThat(all)
        .extracting(WebhookEvent::json)
        .containsExactly("{\"a\":1}", "{\"b\":2}", "{\"c\":3}");
    assertThat(all).isEqualTo(concat(first, second));
    assertThat(all).extracting(WebhookEvent::sequence).isSorted().doesNotHaveDuplicates();
    assertThat(store.events("conv-1", all.get(0).sequence(), 1)).containsExactly(all.get(1));
    assertThat(store.events("conv-1", all.get(2).sequence(), 10)).isEmpty();
    assertThat(store.events("conv-unknown", 0, 10)).isEmpty();
    assertThat(append("sb-1", "conv-1").stored()).isEmpty();
  }

  @Test
  void appendingEventsIsAllOrNothing() throws SQLException {
    execute(rejectEventSql("poison"));

    assertThatThrownBy(() -> append("sb-1", "conv-1", "{\"ok\":1}", "poison", "{}"))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("conversation 'conv-1'");
    assertThat(store.events("conv-1", 0, 10)).isEmpty();
    assertThat(append("sb-1", "conv-1", "{}").stored()).hasSize(1);
  }

  @Test
  void concurrentAppendsToOneConversationStayContiguous() throws Exception {
    int writers = 4;
    int batches = 10;
    runConcurrently(
        writers,
        w -> {
          for (int b = 0; b < batches; b++) {
            append("sb", "conv", w + ":" + b + ":0", w + ":" + b + ":1", w + ":" + b + ":2");
          }
          return null;
        });

    List<String> json = store.events("conv", 0, 1000).stream().map(WebhookEvent::json).toList();
    assertThat(json).hasSize(writers * batches * 3);
    for (int i = 0; i < json.size(); i += 3) {
      String batch = json.get(i).substring(0, json.get(i).lastIndexOf(':'));
      assertThat(json.subList(i, i + 3)).containsExactly(batch + ":0", batch + ":1", batch + ":2");
    }
  }

  @Test
  void conversationsAreInsertedThenReplacedByTheirOwnSandbox() {
    assertThat(store.conversation("conv-1")).isEmpty();

    store.upsertConversation("conv-1", "sb-1", "{\"v\":1}", WebhookQuota.DEFAULT);
    store.upsertConversation("conv-2", "sb-1", "{\"other\":1}", WebhookQuota.DEFAULT);
    store.upsertConversation("conv-1", "sb-1", "{\"v\":2}", WebhookQuota.DEFAULT);

    assertThat(store.conversation("conv-1")).contains("{\"v\":2}");
    assertThat(store.conversation("conv-2")).contains("{\"other\":1}");
  }

  @Test
  void aConversationBelongsToTheSandboxThatPostedToItFirst() {
    store.upsertConversation("conv-1", "sb-1", "{\"v\":1}", WebhookQuota.DEFAULT);
    append("sb-1", "conv-1", "{\"mine\":1}");
    append("sb-2", "conv-2", "{\"first\":1}");

    assertThatThrownBy(
            () -> store.upsertConversation("conv-1", "sb-2", "{\"v\":2}", WebhookQuota.DEFAULT))
        .isInstanceOf(ConversationRefusedException.class)
        .hasMessageContaining("not this sandbox's");
    assertThatThrownBy(() -> append("sb-2", "conv-1", "{\"injected\":1}"))
        .isInstanceOf(ConversationRefusedException.class)
        .extracting(e -> ((ConversationRefusedException) e).reason())
        .isEqualTo(ConversationRefusedException.Reason.NOT_THIS_SANDBOX);
    assertThatThrownBy(
            () -> store.upsertConversation("conv-2", "sb-1", "{\"v\":3}", WebhookQuota.DEFAULT))
        .as("events claim a conversation as a document does")
        .isInstanceOf(ConversationRefusedException.class);

    assertThat(store.conversation("conv-1")).contains("{\"v\":1}");
    assertThat(store.conversation("conv-2")).isEmpty();
    assertThat(store.events("conv-1", 0, 10))
        .extracting(WebhookEvent::json)
        .containsExactly("{\"mine\":1}");
  }

  @Test
  void aReusedSandboxIdOfAnotherOwnerDoesNotInheritItsConversations() {
    store.insert(sandbox("sb-1", "alice", T0));
    append("sb-1", "conv-1", "{\"alice\":1}");
    store.delete("sb-1");
    store.insert(sandbox("sb-1", "bob", T0.plusSeconds(1)));

    assertThatThrownBy(() -> append("sb-1", "conv-1", "{\"bob\":1}"))
        .isInstanceOf(ConversationRefusedException.class);
    assertThat(store.events("conv-1", 0, 10)).extracting(WebhookEvent::json).hasSize(1);
  }

  @Test
  void retentionDropsTheOldestEventsBeyondTheEventQuota() {
    WebhookQuota three = new WebhookQuota(3, 1 << 20, 10);
    store.appendEvents("sb", "conv", List.of("1", "2"), three);
    AppendedEvents appended = store.appendEvents("sb", "conv", List.of("3", "4", "5"), three);

    assertThat(appended.dropped()).isEqualTo(2);
    assertThat(appended.stored()).extracting(WebhookEvent::json).containsExactly("3", "4", "5");
    assertThat(store.events("conv", 0, 10))
        .extracting(WebhookEvent::json)
        .containsExactly("3", "4", "5");
    assertThat(store.appendEvents("sb", "conv", List.of("6"), three).dropped()).isEqualTo(1);
    assertThat(store.events("conv", 0, 10))
        .extracting(WebhookEvent::json)
        .containsExactly("4", "5", "6");
  }

  @Test
  void retentionDropsTheOldestEventsBeyondTheByteQuota() {
    WebhookQuota tenBytes = new WebhookQuota(1000, 10, 10);
    store.appendEvents("sb", "conv", List.of("aaaa", "bbbb"), tenBytes);
    AppendedEvents appended = store.appendEvents("sb", "conv", List.of("\u00e9\u00e9"), tenBytes);

    assertThat(appended.dropped()).as("4 + 4 + 4 UTF-8 bytes > 10").isEqualTo(1);
    assertThat(store.events("conv", 0, 10))
        .extracting(WebhookEvent::json)
        .containsExactly("bbbb", "\u00e9\u00e9");
    assertThat(store.events("other", 0, 10)).isEmpty();
  }

  @Test
  void aSandboxOwnsAtMostItsQuotaOfConversations() {
    WebhookQuota two = new WebhookQuota(1000, 1 << 20, 2);
    store.appendEvents("sb", "c1", List.of("{}"), two);
    store.upsertConversation("c2", "sb", "{}", two);

    assertThatThrownBy(() -> store.appendEvents("sb", "c3", List.of("{}"), two))
        .isInstanceOf(ConversationRefusedException.class)
        .extracting(e -> ((ConversationRefusedException) e).reason())
        .isEqualTo(ConversationRefusedException.Reason.TOO_MANY_CONVERSATIONS);
    assertThatThrownBy(() -> store.upsertConversation("c3", "sb", "{}", two))
        .isInstanceOf(ConversationRefusedException.class);
    assertThat(store.appendEvents("sb", "c1", List.of("{}"), two).stored()).hasSize(1);
    assertThat(store.appendEvents("other", "c3", List.of("{}"), two).stored()).hasSize(1);
    assertThat(store.conversation("c3")).isEmpty();
  }

  private AppendedEvents append(String sandboxId, String conversationId, String... events) {
    return store.appendEvents(sandboxId, conversationId, List.of(events), WebhookQuota.DEFAULT);
  }

  // Schema and concurrency

  @Test
  void reopeningKeepsDataAndMigratesNothing() throws SQLException {
    store.insert(sandbox("sb-1", "alice", T0));
    store.close();
    store = open(database);
    store.close();
    store = open(database);

    assertThat(store.find("sb-1")).isPresent();
    assertThat(query("SELECT COUNT(*), MAX(version) FROM schema_version"))
        .containsExactly(latestVersion(), latestVersion());
  }

  @Test
  void databaseWithANewerSchemaIsRefused() throws SQLException {
    store.close();
    store = null;
    execute(
        List.of(
            "INSERT INTO schema_version (version, description, applied_at) VALUES (99, 'future', 0)"));

    assertThatThrownBy(() -> open(database))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("version 99")
        .hasMessageContaining("newer Paddock");
  }

  @Test
  void storesOpeningTogetherMigrateOnce() throws Exception {
    try (TestDatabase fresh = createDatabase()) {
      List<SandboxStore> opened = runConcurrently(4, i -> open(fresh));
      opened.forEach(SandboxStore::close);
      try (Connection connection = fresh.connect();
          Statement statement = connection.createStatement();
          ResultSet row = statement.executeQuery("SELECT COUNT(*) FROM schema_version")) {
        assertThat(row.next()).isTrue();
        assertThat(row.getLong(1)).isEqualTo(latestVersion());
      }
    }
  }

  @Test
  void concurrentUpdatesFromOneVersionHaveExactlyOneWinner() throws Exception {
    for (int round = 0; round < 10; round++) {
      SandboxRecord read = store.insert(sandbox("race-" + round, "alice", T0.plusSeconds(round)));
      List<Boolean> won =
          runConcurrently(
              8,
              thread -> {
                try {
                  store.update(read.withStatus(SandboxStatus.RUNNING, Optional.of("by " + thread)));
                  return true;
                } catch (ConflictException lost) {
                  return false;
                }
              });

      assertThat(won).containsOnlyOnce(true);
      assertThat(store.find(read.id()).orElseThrow().version()).isEqualTo(1);
    }
  }

  // Settings, labels and filters (issue 9)

  @Test
  void settingsLifetimeAndKeyGenerationRoundTrip() {
    SandboxSettings settings =
        new SandboxSettings(
            Optional.of("python:3.12"),
            Map.of("team", "ml", "app.kubernetes.io/name", "x"),
            new Resources(
                OptionalDouble.of(1.5),
                OptionalLong.of(512L << 20),
                OptionalInt.of(100),
                OptionalLong.empty()),
            Optional.of("/workspace"),
            Optional.of(Duration.ofMinutes(30)),
            Optional.of(Duration.ofMinutes(5)),
            LifetimeAction.PAUSE,
            LifetimeAction.DELETE);
    SandboxRecord record =
        sandbox("sb-set", "alice", T0)
            .withSettings(settings)
            .withTimeoutAt(Optional.of(T0.plusSeconds(1800)))
            .withLastActivityAt(Optional.of(T0.plusSeconds(5)))
            .withKey(41, Optional.of("digest"));

    store.insert(record);

    SandboxRecord found = store.find("sb-set").orElseThrow();
    assertThat(found.settings()).isEqualTo(settings);
    assertThat(found.timeoutAt()).contains(T0.plusSeconds(1800).truncatedTo(ChronoUnit.MILLIS));
    assertThat(found.lastActivityAt()).contains(T0.plusSeconds(5).truncatedTo(ChronoUnit.MILLIS));
    assertThat(found.keyGeneration()).isEqualTo(41);
    SandboxRecord updated = store.update(found.withKey(42, Optional.empty()));
    assertThat(store.find("sb-set").orElseThrow().keyGeneration()).isEqualTo(42);
    assertThat(updated.sessionKeyHash()).isEmpty();
  }

  @Test
  void theVersionAloneFollowsEveryUpdateAndIsEmptyOnceDeleted() {
    SandboxRecord record = store.insert(sandbox("sb-v", "alice", T0));
    assertThat(store.version("sb-v")).hasValue(0);

    SandboxRecord updated = store.update(record.withStatus(SandboxStatus.PAUSED, Optional.empty()));

    assertThat(store.version("sb-v"))
        .hasValue(updated.version())
        .isNotEqualTo(java.util.OptionalLong.of(0));
    store.delete("sb-v");
    assertThat(store.version("sb-v")).isEmpty();
    assertThat(store.version("never")).isEmpty();
  }

  @Test
  void autoResumeAndPublicPortsRoundTripAndPublicPortsChange() {
    SandboxRecord record =
        store.insert(
            sandbox("sb-gw", "alice", T0)
                .withSettings(
                    SandboxSettings.NONE.withAutoResume(true).withPublicPorts(Set.of(8080))));
    assertThat(store.find("sb-gw").orElseThrow().settings().autoResume()).isTrue();

    store.update(record.withSettings(record.settings().withPublicPorts(Set.of(3000, 8080))));

    SandboxSettings found = store.find("sb-gw").orElseThrow().settings();
    assertThat(found.publicPorts()).containsExactly(3000, 8080);
    assertThat(found.autoResume()).isTrue();
    assertThat(store.insert(sandbox("sb-plain", "alice", T0)).settings().publicPorts()).isEmpty();
    assertThat(store.find("sb-plain").orElseThrow().settings().autoResume()).isFalse();
  }

  @Test
  void labelSelectorsMatchEveryGivenLabel() {
    store.insert(labelled("sb-a", T0, Map.of("team", "ml", "env", "prod")));
    store.insert(labelled("sb-b", T0.plusSeconds(1), Map.of("team", "ml", "env", "dev")));
    store.insert(labelled("sb-c", T0.plusSeconds(2), Map.of("team", "web")));

    assertThat(ids(filter(Map.of("team", "ml")))).containsExactly("sb-b", "sb-a");
    assertThat(ids(filter(Map.of("team", "ml", "env", "prod")))).containsExactly("sb-a");
    assertThat(ids(filter(Map.of("team", "nobody")))).isEmpty();
    assertThat(ids(filter(Map.of("env", "prod", "team", "web")))).isEmpty();
  }

  @Test
  void replacingLabelsChangesWhatSelectorsFind() {
    SandboxRecord a = store.insert(labelled("sb-a", T0, Map.of("team", "ml")));

    store.update(a.withSettings(a.settings().withLabels(Map.of("team", "web"))));

    assertThat(ids(filter(Map.of("team", "ml")))).isEmpty();
    assertThat(ids(filter(Map.of("team", "web")))).containsExactly("sb-a");
    assertThat(store.find("sb-a").orElseThrow().settings().labels())
        .containsExactly(Map.entry("team", "web"));
  }

  @Test
  void deletedSandboxesLeaveNoLabelsBehind() {
    store.insert(labelled("sb-a", T0, Map.of("team", "ml")));
    store.delete("sb-a");
    store.insert(labelled("sb-a", T0, Map.of()));

    assertThat(ids(filter(Map.of("team", "ml")))).isEmpty();
  }

  @Test
  void searchFiltersByStatusAndSpecWithinOneOwner() {
    store.insert(sandbox("sb-1", "alice", T0));
    store.insert(
        sandbox("sb-2", "alice", T0.plusSeconds(1))
            .withStatus(SandboxStatus.PAUSED, Optional.empty()));
    SandboxRecord other = sandbox("sb-3", "alice", T0.plusSeconds(2));
    store.insert(
        new SandboxRecord(
            "sb-3",
            other.ownerUserId(),
            "big",
            SandboxStatus.PAUSED,
            Optional.empty(),
            Optional.empty(),
            Optional.empty(),
            T0,
            T0,
            0));
    store.insert(
        sandbox("sb-4", "bob", T0.plusSeconds(3))
            .withStatus(SandboxStatus.PAUSED, Optional.empty()));

    SandboxFilter paused =
        new SandboxFilter(Set.of(SandboxStatus.PAUSED), Map.of(), Optional.empty());
    assertThat(store.page(Optional.of("alice"), paused, PageRequest.first(10)).items())
        .extracting(SandboxRecord::id)
        .containsExactlyInAnyOrder("sb-2", "sb-3");
    SandboxFilter pausedBig =
        new SandboxFilter(Set.of(SandboxStatus.PAUSED), Map.of(), Optional.of("big"));
    assertThat(store.page(Optional.empty(), pausedBig, PageRequest.first(10)).items())
        .extracting(SandboxRecord::id)
        .containsExactly("sb-3");
  }

  @Test
  void filteredPagesAreStable() {
    for (int i = 0; i < 5; i++) {
      store.insert(
          labelled("sb-" + i, T0.plusSeconds(i), Map.of("team", i % 2 == 0 ? "ml" : "web")));
    }
    SandboxFilter ml = new SandboxFilter(Set.of(), Map.of("team", "ml"), Optional.empty());

    Page<SandboxRecord> first = store.page(Optional.empty(), ml, PageRequest.first(2));
    Page<SandboxRecord> second =
        store.page(Optional.empty(), ml, new PageRequest(first.nextPageId(), 2));

    assertThat(first.items()).extracting(SandboxRecord::id).containsExactly("sb-4", "sb-2");
    assertThat(second.items()).extracting(SandboxRecord::id).containsExactly("sb-0");
    assertThat(second.nextPageId()).isEmpty();
  }

  private static SandboxRecord labelled(String id, Instant at, Map<String, String> labels) {
    SandboxRecord record = sandbox(id, "alice", at);
    return record.withSettings(record.settings().withLabels(labels));
  }

  private static SandboxFilter filter(Map<String, String> labels) {
    return new SandboxFilter(Set.of(), labels, Optional.empty());
  }

  private List<String> ids(SandboxFilter filter) {
    return store.page(Optional.empty(), filter, PageRequest.first(100)).items().stream()
        .map(SandboxRecord::id)
        .toList();
  }

  // Replicas and leases

  @Test
  void operationUnderWayRoundTripsAndClears() {
    SandboxOperation deleting = new SandboxOperation(SandboxOperation.Kind.DELETE, "cp-a");
    SandboxRecord inserted =
        store.insert(sandbox("sb-op", "alice", T0).withOperation(Optional.of(deleting)));

    assertThat(store.find("sb-op").orElseThrow().operation()).contains(deleting);
    store.update(inserted.withOperation(Optional.empty()));
    assertThat(store.find("sb-op").orElseThrow().operation()).isEmpty();
  }

  @Test
  void leaseHasOneHolderUntilReleased() {
    assertThat(store.tryLease("background", "cp-a", Duration.ofMinutes(1))).isTrue();
    assertThat(store.tryLease("background", "cp-b", Duration.ofMinutes(1))).isFalse();
    assertThat(store.tryLease("background", "cp-a", Duration.ofMinutes(1)))
        .as("the holder renews")
        .isTrue();
    assertThat(store.tryLease("other", "cp-b", Duration.ofMinutes(1)))
        .as("leases are independent")
        .isTrue();

    store.releaseLease("background", "cp-b"); // not the holder: nothing happens
    assertThat(store.tryLease("background", "cp-b", Duration.ofMinutes(1))).isFalse();
    store.releaseLease("background", "cp-a");
    assertThat(store.tryLease("background", "cp-b", Duration.ofMinutes(1))).isTrue();
  }

  @Test
  void expiredLeasePassesToTheNextReplica() {
    assertThat(store.tryLease("background", "cp-a", Duration.ofMillis(200))).isTrue();

    Awaitility.await("the lease expires and cp-b takes it")
        .atMost(Duration.ofSeconds(5))
        .until(() -> store.tryLease("background", "cp-b", Duration.ofMinutes(1)));
    assertThat(store.tryLease("background", "cp-a", Duration.ofMinutes(1))).isFalse();
  }

  @Test
  void replicasRacingForALeaseThroughTheirOwnPoolsGetOneHolder() throws Exception {
    int replicas = 8;
    List<SandboxStore> stores = new ArrayList<>();
    try {
      for (int i = 0; i < replicas; i++) {
        stores.add(open(database));
      }
      CountDownLatch go = new CountDownLatch(1);
      List<CompletableFuture<Boolean>> attempts = new ArrayList<>();
      for (int i = 0; i < replicas; i++) {
        SandboxStore replica = stores.get(i);
        String holder = "cp-" + i;
        attempts.add(
            CompletableFuture.supplyAsync(
                () -> {
                  awaitQuietly(go);
                  return replica.tryLease("background", holder, Duration.ofMinutes(1));
                }));
      }
      go.countDown();
      assertThat(attempts.stream().map(CompletableFuture::join).filter(won -> won)).hasSize(1);
    } finally {
      stores.forEach(SandboxStore::close);
    }
  }

  @Test
  void heartbeatKeepsAReplicaLiveUntilItExpiresOrRetires() {
    store.heartbeat("cp-a", Duration.ofMinutes(1));
    store.heartbeat("cp-b", Duration.ofMillis(200));
    store.tryLease("background", "cp-a", Duration.ofMinutes(1));

    assertThat(store.liveReplicas()).contains("cp-a");
    Awaitility.await("cp-b's heartbeat lapses")
        .atMost(Duration.ofSeconds(5))
        .until(() -> !store.liveReplicas().contains("cp-b"));
    store.heartbeat("cp-b", Duration.ofMinutes(1));
    assertThat(store.liveReplicas()).as("a renewed heartbeat").contains("cp-a", "cp-b");

    store.retireReplica("cp-a");
    assertThat(store.liveReplicas()).containsExactly("cp-b");
    assertThat(store.tryLease("background", "cp-b", Duration.ofMinutes(1)))
        .as("retiring released cp-a's lease")
        .isTrue();
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  // Helpers

  /** How many migrations there are (one per {@code V<n>__} line of the index). */
  private static long latestVersion() {
    try (var in = SandboxStoreContract.class.getResourceAsStream("/db/migration/index.txt")) {
      return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8)
          .lines()
          .filter(line -> line.startsWith("V"))
          .count();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** Opens a store on {@code db}. */
  protected static SandboxStore open(TestDatabase db) {
    return SandboxStores.open(db.url(), db.user(), db.password());
  }

  protected static SandboxRecord sandbox(String id, String owner, Instant createdAt) {
    return new SandboxRecord(
        id,
        Optional.of(owner),
        "default",
        SandboxStatus.STARTING,
        Optional.empty(),
        Optional.empty(),
        Optional.empty(),
        createdAt,
        createdAt,
        0);
  }

  private static SandboxRecord copyOf(SandboxRecord record, String newId) {
    return new SandboxRecord(
        newId,
        Optional.empty(),
        record.specId(),
        record.status(),
        record.sessionKeyHash(),
        record.runtime(),
        record.statusDetail(),
        record.createdAt(),
        record.updatedAt(),
        0);
  }

  private static ApiKeyRecord apiKey(String id, String userId, String hash, Instant createdAt) {
    return new ApiKeyRecord(id, userId, hash, "laptop", createdAt, Optional.empty());
  }

  private List<SandboxRecord> allPages(Optional<String> owner, int limit) {
    List<SandboxRecord> all = new ArrayList<>();
    PageRequest request = PageRequest.first(limit);
    while (true) {
      Page<SandboxRecord> page = store.page(owner, request);
      all.addAll(page.items());
      if (page.nextPageId().isEmpty()) {
        return all;
      }
      request = new PageRequest(page.nextPageId(), limit);
    }
  }

  private static List<String> ids(List<SandboxRecord> records) {
    return records.stream().map(SandboxRecord::id).toList();
  }

  private static <T> List<T> concat(List<T> a, List<T> b) {
    List<T> all = new ArrayList<>(a);
    all.addAll(b);
    return all;
  }

  /** A task run by each of several threads. */
  @FunctionalInterface
  protected interface ThreadTask<T> {
    T run(int thread) throws Exception;
  }

  /** Runs {@code task} on {@code threads} threads released together; their results in order. */
  protected static <T> List<T> runConcurrently(int threads, ThreadTask<T> task) throws Exception {
    try (ExecutorService executor = Executors.newFixedThreadPool(threads)) {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<T>> futures = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        int thread = i;
        futures.add(
            executor.submit(
                () -> {
                  start.await();
                  return task.run(thread);
                }));
      }
      start.countDown();
      List<T> results = new ArrayList<>();
      for (Future<T> future : futures) {
        results.add(future.get());
      }
      return results;
    }
  }

  private void execute(List<String> statements) throws SQLException {
    try (Connection connection = database.connect();
        Statement statement = connection.createStatement()) {
      for (String sql : statements) {
        statement.execute(sql);
      }
    }
  }

  private List<Long> query(String sql) throws SQLException {
    try (Connection connection = database.connect();
        Statement statement = connection.createStatement();
        ResultSet row = statement.executeQuery(sql)) {
      assertThat(row.next()).isTrue();
      List<Long> values = new ArrayList<>();
      for (int i = 1; i <= row.getMetaData().getColumnCount(); i++) {
        values.add(row.getLong(i));
      }
      return values;
    }
  }
}
