package dev.paddock.runtimeapi;

import dev.paddock.api.ExposedUrl;
import dev.paddock.api.KeyDigest;
import dev.paddock.api.Page;
import dev.paddock.api.PageRequest;
import dev.paddock.api.Resources;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxSpecService;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeRequest;
import dev.paddock.api.spi.RuntimeStartException;
import dev.paddock.api.spi.RuntimeState;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.backend.kit.protocol.HttpAgents;
import dev.paddock.http.HttpError;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The runtime API's operations on its sessions, over the local backend. The backend is the truth
 * about what runs; this class keeps what the protocol needs beside it (runtime id, key generation,
 * the request), and saves it to its {@link SessionFile} after every change, so a restarted runtime
 * API takes its sessions back ({@link #restore}). Each change holds the session's lock; reads do
 * not. Thread-safe.
 *
 * <p>Keys: a session started by an OpenHands caller gets a key derived by {@link RuntimeKeys},
 * returned while it runs; pause advances the generation (revoking it) before freezing, resume
 * rotates the agent to the next one, stop revokes before tearing down. A session started by a
 * Paddock control plane ({@code paddock_session_key_sha256}) is keyed by that control plane: this
 * API passes its digests to the agent and never sees a key.
 */
final class RuntimeSessions implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RuntimeSessions.class);

  /** A restored session keyed with a secret this process does not have. */
  private static final RuntimeFailure.Kind KEYS_LOST =
      RuntimeFailure.Kind.of(
          "runtime-api.keys-lost",
          "The runtime API restarted with another secret, so this sandbox's keys are lost; stop"
              + " it and start a new one.");

  /** A restored session whose start the restart cut short, with no runtime listed. */
  private static final RuntimeFailure.Kind INTERRUPTED =
      RuntimeFailure.Kind.of(
          "runtime-api.interrupted", "The runtime API restarted while this sandbox was starting.");

  private final SandboxBackend backend;
  private final SandboxSpecService specs;
  private final SessionTable table;
  private final SessionFile file;
  private final RuntimeKeys keys;
  private final HttpAgents agents = HttpAgents.create(Duration.ofSeconds(5));
  private final Clock clock;

  RuntimeSessions(
      SandboxBackend backend,
      SandboxSpecService specs,
      SessionTable table,
      SessionFile file,
      RuntimeKeys keys,
      Clock clock) {
    this.backend = backend;
    this.specs = specs;
    this.table = table;
    this.file = file;
    this.keys = keys;
    this.clock = clock;
  }

  /** What a session looks like right now, read from the backend. */
  record Live(
      Session session, SandboxStatus status, Optional<String> agentUrl, boolean unreadable) {}

  /**
   * Makes a session's runtime and returns once it runs or has failed (a failed start is kept in
   * {@code error} until {@code /stop}, as a pod would be).
   *
   * @throws HttpError 409 for a session id in use, 429 at capacity
   */
  Live start(StartBody body) {
    Session session = newSession(body);
    switch (table.reserve(session)) {
      case TAKEN ->
          throw HttpError.conflict(
              "session '" + body.sessionId() + "' exists; stop it first or use another id");
      case FULL ->
          throw new HttpError(
              429, "this runtime API holds " + table.max() + " sessions, its maximum; try later");
      case RESERVED -> {}
    }
    try {
      persist();
    } catch (HttpError e) {
      table.remove(session);
      throw e;
    }
    session.lock.lock();
    try {
      makeRuntime(session);
      saveOrLog();
    } finally {
      session.lock.unlock();
    }
    return live(session);
  }

  private Session newSession(StartBody body) {
    String runtimeId = keys.newRuntimeId();
    long generation = 0;
    List<String> digests =
        body.sessionKeyDigests()
            .orElseGet(() -> List.of(KeyDigest.sha256Hex(keys.sessionKey(runtimeId, generation))));
    String adminDigest =
        body.adminKeyDigest()
            .orElseGet(
                () -> body.callerKeyed() ? "" : KeyDigest.sha256Hex(keys.adminKey(runtimeId)));
    RuntimeRequest request =
        new RuntimeRequest(body.sessionId(), spec(body), body.environment(), digests, adminDigest);
    return new Session(
        runtimeId,
        clock.instant(),
        request,
        body.client(),
        body.callerKeyed(),
        body.resourceFactor(),
        generation);
  }

  /**
   * The local spec the image names (by id or image), else the default spec running that image; with
   * Paddock's command, working directory and limits when given, and OpenHands' resource factor
   * applied to the limits.
   */
  private SandboxSpec spec(StartBody body) {
    SandboxSpec base = specNamed(body.image()).orElseGet(() -> withImage(body.image()));
    SandboxSpec.Builder spec = base.toBuilder();
    body.command().ifPresent(spec::command);
    body.workingDir().ifPresent(spec::workingDir);
    Resources limits =
        body.resources().equals(Resources.NONE) ? base.resources() : body.resources();
    spec.resources(scaled(limits, body.resourceFactor()));
    return spec.build();
  }

  private SandboxSpec withImage(String image) {
    return specs.defaultSpec().toBuilder().image(image).build();
  }

  private Optional<SandboxSpec> specNamed(String image) {
    return specs
        .get(image)
        .or(() -> allSpecs().stream().filter(s -> s.imageReference().equals(image)).findFirst());
  }

  /** Every local spec, default first (the warm configs). */
  List<SandboxSpec> allSpecs() {
    List<SandboxSpec> all = new ArrayList<>();
    Optional<String> pageId = Optional.empty();
    do {
      Page<SandboxSpec> page = specs.search(new PageRequest(pageId, PageRequest.MAX_LIMIT));
      all.addAll(page.items());
      pageId = page.nextPageId();
    } while (pageId.isPresent());
    return all;
  }

  private static Resources scaled(Resources limits, int factor) {
    if (factor == 1) {
      return limits;
    }
    return new Resources(
        limits.cpus().isPresent()
            ? OptionalDouble.of(limits.cpus().getAsDouble() * factor)
            : OptionalDouble.empty(),
        limits.memoryBytes().isPresent()
            ? OptionalLong.of(limits.memoryBytes().getAsLong() * factor)
            : OptionalLong.empty(),
        limits.pids().isPresent()
            ? OptionalInt.of(limits.pids().getAsInt() * factor)
            : OptionalInt.empty(),
        limits.diskBytes());
  }

  // Holds the session's lock.
  private void makeRuntime(Session session) {
    session.starting();
    try {
      session.up(backend.start(session.request()));
    } catch (RuntimeStartException e) {
      LOG.warn("session {}: start failed: {}", session.sessionId(), e.getMessage());
      session.failed(e.failure());
    } catch (RuntimeException e) {
      LOG.warn("session {}: start failed unexpectedly", session.sessionId(), e);
      session.failed(new RuntimeFailure(RuntimeFailure.Kind.UNKNOWN, e.toString()));
    }
  }

  /** The session and its live state, or 404. */
  Live get(String sessionId) {
    return live(
        table
            .bySessionId(sessionId)
            .orElseThrow(() -> HttpError.notFound("no session '" + sessionId + "'")));
  }

  Optional<Live> find(String sessionId) {
    return table.bySessionId(sessionId).map(this::live);
  }

  List<Live> all() {
    return table.all().stream().map(this::live).toList();
  }

  Live live(Session session) {
    return switch (session.phase()) {
      case STARTING -> new Live(session, SandboxStatus.STARTING, Optional.empty(), false);
      case FAILED -> new Live(session, SandboxStatus.ERROR, Optional.empty(), false);
      case UP, PAUSED -> inspected(session);
    };
  }

  private Live inspected(Session session) {
    RuntimeHandle handle = session.handle().orElseThrow();
    try {
      RuntimeState state = backend.inspect(handle);
      Optional<String> url =
          state.urls().stream()
              .filter(u -> u.name().equals(ExposedUrl.AGENT_SERVER))
              .map(ExposedUrl::url)
              .findFirst();
      SandboxStatus status = state.status();
      return new Live(
          session, status, status == SandboxStatus.RUNNING ? url : Optional.empty(), false);
    } catch (RuntimeException e) {
      LOG.warn("session {}: cannot read its runtime's state", session.sessionId(), e);
      return new Live(session, SandboxStatus.ERROR, Optional.empty(), true);
    }
  }

  /**
   * Freezes a session; idempotent for a paused one. Its own key (OpenHands callers) is revoked
   * first.
   *
   * @throws HttpError 404 for an unknown runtime, 409 for one still starting or failed
   */
  Live pause(String runtimeId) {
    Session session = byRuntimeId(runtimeId);
    session.lock.lock();
    try {
      switch (session.phase()) {
        case PAUSED -> {
          return live(session);
        }
        case STARTING -> throw HttpError.conflict("runtime " + runtimeId + " is still starting");
        case FAILED ->
            throw HttpError.conflict(
                "runtime " + runtimeId + " is in error; resume it to start again, or stop it");
        case UP -> {}
      }
      Optional<String> url = live(session).agentUrl();
      revoke(session, url);
      backend.pause(session.handle().orElseThrow());
      session.paused();
      saveOrLog();
    } catch (RuntimeException e) {
      if (e instanceof HttpError) {
        throw e;
      }
      LOG.warn("session {}: pause failed", session.sessionId(), e);
      throw new HttpError(503, "could not pause runtime " + runtimeId + "; try again");
    } finally {
      session.lock.unlock();
    }
    return live(session);
  }

  /**
   * Thaws a paused session, or starts a failed one again, with a new key (OpenHands callers).
   *
   * @throws HttpError 404 for an unknown runtime, 409 unless it is paused or in error
   */
  Live resume(String runtimeId) {
    Session session = byRuntimeId(runtimeId);
    session.lock.lock();
    try {
      Live before = live(session);
      if (before.unreadable()) {
        throw new HttpError(503, "runtime " + runtimeId + "'s state cannot be read now; try again");
      }
      if (before.status() != SandboxStatus.PAUSED && before.status() != SandboxStatus.ERROR) {
        throw HttpError.conflict(
            "runtime "
                + runtimeId
                + " is "
                + RuntimeWire.status(before)
                + "; only a paused runtime or one in error can be resumed");
      }
      // Any resume but a thaw makes the runtime again from its request (a failed session, or one
      // the backend reports in error): a restored request without its environment values cannot.
      if (session.phase() != Session.Phase.PAUSED && session.remakeRefusal().isPresent()) {
        throw HttpError.conflict(
            "runtime "
                + runtimeId
                + " cannot be started again: "
                + session.remakeRefusal().get()
                + "; stop it and start a new one");
      }
      if (session.handle().isEmpty()) {
        makeRuntime(session);
      } else {
        thaw(session);
      }
      if (session.phase() == Session.Phase.UP && !session.callerKeyed()) {
        rotateToNextKey(session);
      }
      saveOrLog();
    } finally {
      session.lock.unlock();
    }
    return live(session);
  }

  // Holds the lock. A runtime in error with a handle is stopped and made again from its request.
  private void thaw(Session session) {
    RuntimeHandle handle = session.handle().orElseThrow();
    try {
      if (session.phase() == Session.Phase.PAUSED) {
        session.up(backend.resume(handle));
      } else {
        backend.destroy(handle);
        makeRuntime(session);
      }
    } catch (RuntimeStartException e) {
      session.failed(e.failure());
    } catch (RuntimeException e) {
      LOG.warn("session {}: resume failed", session.sessionId(), e);
      session.failed(new RuntimeFailure(RuntimeFailure.Kind.UNKNOWN, e.toString()));
    }
  }

  // Holds the lock. An agent that does not take its new key is frozen again: it may still accept
  // the old one.
  private void rotateToNextKey(Session session) {
    session.advanceGeneration();
    saveOrLog();
    String key = keys.sessionKey(session.runtimeId(), session.generation());
    try {
      String url =
          live(session)
              .agentUrl()
              .orElseThrow(() -> new IllegalStateException("the resumed agent exposes no URL"));
      agents
          .at(url, keys.adminKey(session.runtimeId()))
          .replaceSessionKeys(List.of(KeyDigest.sha256Hex(key)));
    } catch (RuntimeException e) {
      LOG.warn("session {}: the resumed agent did not take its new key", session.sessionId(), e);
      session.advanceGeneration();
      try {
        backend.pause(session.handle().orElseThrow());
      } catch (RuntimeException frozen) {
        e.addSuppressed(frozen);
      }
      session.failed(new RuntimeFailure(RuntimeFailure.Kind.UNKNOWN, e.toString()));
    }
  }

  /**
   * Revokes the key, tears the runtime down and forgets the session. A failed teardown is a 503 and
   * the session stays (revoked) for a retry.
   *
   * @throws HttpError 404 for an unknown runtime
   */
  void stop(String runtimeId) {
    Session session = byRuntimeId(runtimeId);
    session.lock.lock();
    try {
      Optional<String> url = live(session).agentUrl();
      revoke(session, url);
      session.handle().ifPresent(backend::destroy);
      table.remove(session);
      saveOrLog();
    } catch (RuntimeException e) {
      if (e instanceof HttpError) {
        throw e;
      }
      LOG.warn("session {}: stop failed", session.sessionId(), e);
      throw new HttpError(
          503, "could not stop runtime " + runtimeId + "; its key stays revoked; try again");
    } finally {
      session.lock.unlock();
    }
  }

  // Holds the lock. The store-side revocation (the generation) always holds; the agent's is
  // best effort, as a frozen or dead agent cannot answer.
  private void revoke(Session session, Optional<String> agentUrl) {
    if (session.callerKeyed()) {
      return;
    }
    session.advanceGeneration();
    saveOrLog();
    if (agentUrl.isEmpty()) {
      return;
    }
    try {
      agents.at(agentUrl.get(), keys.adminKey(session.runtimeId())).replaceSessionKeys(List.of());
    } catch (RuntimeException e) {
      LOG.info("session {}: key revoked here only: {}", session.sessionId(), e.getMessage());
    }
  }

  /**
   * {@link #persist()} for a change that has happened already (a runtime made, paused, stopped; a
   * key revoked or rotated): refusing it would keep nobody safer and, with the disk full, would
   * make a sandbox that filled it impossible to stop. The next save writes it; a restart before
   * that brings back the state of the last save (a revoked key's generation is never issued again:
   * a resume advances past it).
   */
  private void saveOrLog() {
    try {
      file.save(keys.secretCheck(), table::all);
    } catch (UncheckedIOException e) {
      LOG.error("cannot save the sessions (the next change retries): {}", e.getMessage());
    }
  }

  /**
   * Writes every session to the sessions file before a start makes its runtime, so a restart never
   * forgets a sandbox it made.
   *
   * @throws HttpError 503 when the file cannot be written (nothing was made)
   */
  private void persist() {
    try {
      file.save(keys.secretCheck(), table::all);
    } catch (UncheckedIOException e) {
      LOG.error("cannot save the sessions: {}", e.getMessage());
      throw new HttpError(503, "the runtime API cannot record its sessions on disk; try again");
    }
  }

  /**
   * Takes back the sessions a previous run saved, before the server answers anything: each with the
   * handle the backend lists now (the backend is the truth about what runs); one that was starting
   * comes back up when its runtime is listed, else in error; one keyed with another secret (a
   * restart without {@code PADDOCK_RUNTIME_API_SECRET}) in error, as its keys cannot be derived any
   * more.
   *
   * @return how many sessions were restored
   * @throws IllegalStateException when the sessions file cannot be read
   */
  int restore() {
    Optional<SessionFile.Saved> saved = file.load();
    if (saved.isEmpty()) {
      return 0;
    }
    boolean sameSecret = saved.get().secretCheck().equals(keys.secretCheck());
    Map<String, RuntimeHandle> listed = listedNow();
    for (Session session : saved.get().sessions()) {
      adopt(session, Optional.ofNullable(listed.get(session.sessionId())), sameSecret);
      table.restore(session);
    }
    saveOrLog();
    return saved.get().sessions().size();
  }

  private Map<String, RuntimeHandle> listedNow() {
    Map<String, RuntimeHandle> listed = new LinkedHashMap<>();
    try {
      backend.list().forEach(h -> listed.put(h.sandboxId(), h));
    } catch (RuntimeException e) {
      // The saved handles stay; inspecting them says what runs once the backend answers again.
      LOG.warn("cannot list the backend's runtimes while restoring the sessions", e);
    }
    return listed;
  }

  private static void adopt(Session session, Optional<RuntimeHandle> now, boolean sameSecret) {
    Session.Phase phase = session.phase();
    Optional<RuntimeHandle> handle = now.or(session::handle);
    Optional<RuntimeFailure> failure = session.failure();
    Optional<String> refusal = session.remakeRefusal();
    if (phase == Session.Phase.STARTING) {
      phase = now.isPresent() ? Session.Phase.UP : Session.Phase.FAILED;
      if (now.isEmpty()) {
        failure =
            Optional.of(
                new RuntimeFailure(INTERRUPTED, "the runtime API restarted while it started"));
      }
    }
    if (!sameSecret && !session.callerKeyed()) {
      phase = Session.Phase.FAILED;
      failure = Optional.of(new RuntimeFailure(KEYS_LOST, "restored with another secret"));
      refusal = Optional.of("its keys were derived from a secret this runtime API does not have");
    }
    session.restore(phase, handle, failure, refusal);
  }

  private Session byRuntimeId(String runtimeId) {
    return table
        .byRuntimeId(runtimeId)
        .orElseThrow(() -> HttpError.notFound("no runtime '" + runtimeId + "'"));
  }

  /** The key of a running session this API keys itself. */
  Optional<String> sessionKey(Live live) {
    Session session = live.session();
    if (session.callerKeyed() || live.status() != SandboxStatus.RUNNING) {
      return Optional.empty();
    }
    return Optional.of(keys.sessionKey(session.runtimeId(), session.generation()));
  }

  /** Free capacity: the maximum less every session held (paused and failed ones included). */
  Map<String, Object> capacity() {
    int held = table.size();
    Map<String, Object> capacity = new LinkedHashMap<>();
    capacity.put("max_sandboxes", table.max());
    capacity.put("sandboxes", held);
    capacity.put("free", Math.max(0, table.max() - held));
    capacity.put("backend", backend.name());
    return capacity;
  }

  @Override
  public void close() {
    agents.close();
  }
}
