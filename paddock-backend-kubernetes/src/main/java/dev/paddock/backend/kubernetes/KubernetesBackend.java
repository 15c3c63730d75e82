package dev.paddock.backend.kubernetes;

import dev.paddock.api.ExposedUrl;
import dev.paddock.api.SandboxException;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.ListedRuntime;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeFailure.Kind;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeRequest;
import dev.paddock.api.spi.RuntimeStartException;
import dev.paddock.api.spi.RuntimeState;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.backend.kit.protocol.AgentSecrets;
import dev.paddock.backend.kit.protocol.AliveProbe;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.KubernetesClientTimeoutException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Sandboxes as pods, one per sandbox, through the Kubernetes API. A sandbox owns four objects, all
 * named after it and labelled ({@link SandboxObjects}): its workspace claim (which also keeps the
 * pod's manifest, to create it again on resume), its Secret (the agent's key digests, mounted as
 * the agent's {@code --secrets-file}), its NetworkPolicy and, while it runs, its pod.
 *
 * <p>Pause deletes the pod and keeps the claim, marked paused; resume creates the same pod again on
 * the same claim, whose agent then holds only the admin digest until the control plane hands it the
 * new session key. Delete removes all four explicitly (no reliance on owner references and garbage
 * collection). Status is read from the pod's phase, container states and conditions (and events,
 * for a start that ends pending); the agent counts as RUNNING only once it answers {@code /alive}
 * at the pod's IP. The reconcile loop's {@link #listWithState()} is one labelled list per kind, not
 * a call per sandbox.
 *
 * <p>Only the request kinds fabric8's mock server implements in CRUD mode: creates with explicit
 * names, gets, lists with equality label selectors, JSON patches, deletes, and one watch with an
 * equality label selector ({@link PodEvents}: every wait on a pod shares it). Thread-safe; calls
 * for one sandbox are serialised by the control plane.
 */
final class KubernetesBackend implements SandboxBackend {
  static final String NAME = "kubernetes";
  static final String NAMESPACE = "namespace";
  static final String POD = "pod";

  static final Kind API_ERROR =
      Kind.of("kubernetes.api", "The Kubernetes API refused or failed the request.");

  private static final System.Logger LOG = System.getLogger("paddock.backend.kubernetes");

  private final KubernetesSettings settings;
  private final KubernetesClient client;
  private final String namespace;
  private final SandboxObjects objects;
  private final AliveProbe probe = new AliveProbe(Duration.ofSeconds(1));
  private final Set<String> starting = ConcurrentHashMap.newKeySet();
  private final PodEvents podEvents;

  KubernetesBackend(KubernetesSettings settings, KubernetesClient client) {
    this.settings = settings;
    this.client = client;
    this.namespace = settings.namespace().orElseGet(() -> defaultNamespace(client));
    this.objects = new SandboxObjects(settings);
    this.podEvents =
        new PodEvents(
            watcher ->
                client.pods().inNamespace(namespace).withLabels(objects.ours()).watch(watcher));
  }

  private static String defaultNamespace(KubernetesClient client) {
    String configured = client.getNamespace();
    return configured == null || configured.isBlank() ? "default" : configured;
  }

  @Override
  public String name() {
    return NAME;
  }

  String namespace() {
    return namespace;
  }

  // ---------------------------------------------------------------- start

  @Override
  public RuntimeHandle start(RuntimeRequest request) {
    if (request.spec().agentServer() == dev.paddock.api.SandboxSpec.AgentServer.IMAGE) {
      throw failure(Kind.IMAGE_UNSUITABLE, "the kubernetes backend runs Paddock's agent only");
    }
    String id = request.sandboxId();
    starting.add(id);
    try {
      Pod pod = objects.pod(request);
      createTogether(
          id,
          objects.claim(request, pod),
          List.of(
              objects.secret(id, request.sessionKeyDigests(), request.adminKeyDigest()),
              objects.policy(id)));
      try {
        RuntimeHandle running = createAndAwait(id, pod);
        trace("start of {0} returns: running", id);
        return running;
      } catch (RuntimeException e) {
        RuntimeStartException failure = asStartFailure(e, "starting " + id);
        LOG.log(System.Logger.Level.WARNING, "kubernetes: start of {0} failed: {1}", id, e);
        // The clean-up must reach the API even when the start was interrupted (fabric8 refuses
        // calls while the flag is set); the flag is kept for the caller.
        boolean interrupted = Thread.interrupted();
        removeQuietly(id, failure);
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
        throw failure;
      }
    } finally {
      starting.remove(id);
    }
  }

  /**
   * One step of a start, at TRACE: what {@code KubernetesBench --trace} times a start by. Off (one
   * level check) unless the logger {@code paddock.backend.kubernetes} is at TRACE (JUL: FINER).
   */
  private static void trace(String format, Object... args) {
    LOG.log(System.Logger.Level.TRACE, format, args);
  }

  private void create(HasMetadata object) {
    client.resource(object).inNamespace(namespace).create();
  }

  /**
   * Creates the pod and waits until it runs, following it from the create's own answer through the
   * shared watch, which this subscribes to before the create: no read and no watch of its own.
   */
  private RuntimeHandle createAndAwait(String id, Pod pod) {
    try (PodEvents.Subscription changes = podEvents.subscribe(pod.getMetadata().getName())) {
      trace("creating pod {0}", pod.getMetadata().getName());
      Pod created = client.resource(pod).inNamespace(namespace).create();
      trace("created pod {0}", pod.getMetadata().getName());
      return awaitRunning(id, changes, created);
    }
  }

  /** Waits until the pod that exists now runs (a repeated resume's). */
  private RuntimeHandle awaitRunning(String id) {
    try (PodEvents.Subscription changes = podEvents.subscribe(SandboxObjects.podName(id))) {
      return awaitRunning(id, changes, pods(id).get());
    }
  }

  /**
   * Creates the sandbox's claim and the objects its pod needs (Secret, NetworkPolicy) at once, one
   * virtual thread each, joined before it returns: none depends on another, and each is a round
   * trip the start would otherwise wait for in turn. The pod itself is created after them, never
   * with them: it must not run before its NetworkPolicy exists, and a pod whose claim or Secret is
   * missing is retried by the scheduler and kubelet with back-off. When any fails, the objects this
   * call may have made are removed: every one but those refused with 409 (already there, e.g. of a
   * sandbox with the same id: not this start's to delete); a create that failed otherwise (a
   * timeout, a 5xx) may still have been made by the server. The claim's failure is the one reported
   * when it failed.
   */
  private void createTogether(String id, HasMetadata claim, List<HasMetadata> others) {
    List<HasMetadata> all = new ArrayList<>();
    all.add(claim);
    all.addAll(others);
    List<Future<?>> creates = new ArrayList<>();
    try (var threads = Executors.newVirtualThreadPerTaskExecutor()) {
      for (HasMetadata object : all) {
        creates.add(
            threads.submit(
                () -> {
                  trace("creating {0} {1}", object.getKind(), object.getMetadata().getName());
                  create(object);
                  trace("created {0} {1}", object.getKind(), object.getMetadata().getName());
                }));
      }
    }
    // Closing the executor waits for every create; an interrupt meanwhile is kept for the caller,
    // but the clean-up below must still reach the API (fabric8 refuses calls while interrupted).
    boolean interrupted = Thread.interrupted();
    List<HasMetadata> ours = new ArrayList<>();
    RuntimeStartException failure = null;
    for (int i = 0; i < all.size(); i++) {
      Optional<RuntimeException> error = failureOf(creates.get(i));
      if (error.isEmpty() || !isConflict(error.get())) {
        ours.add(all.get(i));
      }
      if (error.isPresent() && failure == null) {
        failure =
            asStartFailure(
                error.get(), i == 0 ? "creating the workspace claim of " + id : "starting " + id);
      } else if (error.isPresent()) {
        failure.addSuppressed(error.get());
      }
    }
    if (failure != null) {
      LOG.log(System.Logger.Level.WARNING, "kubernetes: start of {0} failed: {1}", id, failure);
      for (HasMetadata object : ours) {
        try {
          client.resource(object).inNamespace(namespace).delete();
        } catch (RuntimeException cleanup) {
          failure.addSuppressed(cleanup);
        }
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    if (failure != null) {
      throw failure;
    }
  }

  private static boolean isConflict(RuntimeException e) {
    return e instanceof KubernetesClientException api && api.getCode() == 409;
  }

  /** What a finished create threw, if anything. */
  private static Optional<RuntimeException> failureOf(Future<?> create) {
    return switch (create.state()) {
      case SUCCESS -> Optional.empty();
      case FAILED ->
          Optional.of(
              create.exceptionNow() instanceof RuntimeException runtime
                  ? runtime
                  : new IllegalStateException(create.exceptionNow()));
      default ->
          Optional.of(failure(Kind.UNKNOWN, "a create of the sandbox's objects was cut off"));
    };
  }

  /**
   * Waits (from {@code read}, the pod read after {@code changes} began, then on its changes) until
   * the pod has an IP or fails, then probes its agent every {@link #PROBE_INTERVAL} until it
   * answers, reading the pod again every {@link #POD_CHECK} (a container that died fails the start
   * then); a pod still pending at the deadline is diagnosed from its conditions and events.
   *
   * <p>The probe starts as soon as the pod has an IP, whatever its phase: a kubelet gives the pod
   * its IP with its sandbox and may report the container running only at its next relist, while the
   * agent can answer before that.
   */
  private RuntimeHandle awaitRunning(String id, PodEvents.Subscription changes, Pod read) {
    long deadline = System.nanoTime() + settings.readyTimeout().toNanos();
    Pod pod;
    try {
      pod =
          awaitPod(
              id,
              changes,
              read,
              p -> p == null || PodDiagnosis.fatal(p, false).isPresent() || ip(p).isPresent(),
              deadline);
    } catch (KubernetesClientTimeoutException e) {
      Pod last = pods(id).get();
      throw new RuntimeStartException(
          last == null
              ? new RuntimeFailure(PodDiagnosis.POD_GONE, "pod of " + id + " vanished")
              : PodDiagnosis.pending(last, events(SandboxObjects.podName(id))));
    }
    trace(
        "pod of {0} seen: phase {1}, ip {2}",
        id,
        pod == null ? "(gone)" : PodDiagnosis.status(pod).getPhase(),
        pod == null ? "-" : PodDiagnosis.status(pod).getPodIP());
    int refused = 0;
    long checkAt = System.nanoTime() + POD_CHECK.toNanos();
    while (true) {
      checkStarting(id, pod);
      Optional<String> ip = ip(pod);
      long t0 = System.nanoTime();
      if (ip.isPresent() && probe.answers(ip.get(), settings.agentPort())) {
        trace(
            "agent of {0} answered /alive at {1} after {2} refused probes; this probe took {3} us",
            id, ip.get(), refused, (System.nanoTime() - t0) / 1000);
        return handle(id);
      }
      refused++;
      if (System.nanoTime() - deadline >= 0) {
        throw new RuntimeStartException(
            PodDiagnosis.pending(pod, events(pod.getMetadata().getName())));
      }
      LockSupport.parkNanos(PROBE_INTERVAL.toNanos());
      if (Thread.interrupted()) {
        Thread.currentThread().interrupt();
        throw failure(Kind.UNKNOWN, "interrupted while waiting for " + id);
      }
      if (System.nanoTime() - checkAt >= 0) {
        pod = pods(id).get();
        checkAt = System.nanoTime() + POD_CHECK.toNanos();
      }
    }
  }

  /** How often a pod with an IP is probed until its agent answers (a refused connect is cheap). */
  private static final Duration PROBE_INTERVAL = Duration.ofMillis(5);

  /** How often the pod is read while its agent is probed. */
  private static final Duration POD_CHECK = Duration.ofMillis(200);

  /** The pod's IP once it has one. */
  private static Optional<String> ip(Pod pod) {
    String ip = PodDiagnosis.status(pod).getPodIP();
    return ip == null || ip.isBlank() ? Optional.empty() : Optional.of(ip);
  }

  /**
   * The pod once {@code done} holds for it (null: gone), read after subscribing to its changes.
   *
   * @throws KubernetesClientTimeoutException at {@code deadline} (a {@link System#nanoTime} value)
   */
  private Pod awaitPod(String id, java.util.function.Predicate<Pod> done, long deadline) {
    try (PodEvents.Subscription changes = podEvents.subscribe(SandboxObjects.podName(id))) {
      return awaitPod(id, changes, pods(id).get(), done, deadline);
    }
  }

  /**
   * The pod once {@code done} holds for it (null: gone): from {@code read} (its state after {@code
   * changes} began: a read, or a create's answer), followed through the shared watch's changes of
   * it ({@link PodEvents}), in windows of at most {@link #WATCH_WINDOW} that each end with a fresh
   * read (a watch can drop, or close on 410 Gone, and a change may then never reach it). Only
   * changes of the pod read (its uid) are tested; a change of another pod of the name (a later one)
   * makes it read again at once.
   *
   * @throws KubernetesClientTimeoutException at {@code deadline} (a {@link System#nanoTime} value)
   */
  private Pod awaitPod(
      String id,
      PodEvents.Subscription changes,
      Pod read,
      java.util.function.Predicate<Pod> done,
      long deadline) {
    try {
      Pod now = read;
      while (true) {
        if (done.test(now)) {
          return now;
        }
        if (System.nanoTime() - deadline >= 0) {
          throw new KubernetesClientTimeoutException(
              "Pod", SandboxObjects.podName(id), namespace, 0, TimeUnit.MILLISECONDS);
        }
        long windowEnd = System.nanoTime() + WATCH_WINDOW.toNanos();
        Optional<PodEvents.Change> change =
            awaitChange(changes, now, done, deadline - windowEnd < 0 ? deadline : windowEnd);
        if (change.isPresent()) {
          return change.get().deleted() ? null : change.get().pod();
        }
        now = pods(id).get();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw failure(Kind.UNKNOWN, "interrupted while waiting for the pod of " + id);
    }
  }

  /**
   * The first change of the pod {@code read} (same uid) for which {@code done} holds, until {@code
   * end}; empty when the window ends, or at once when another pod of the name shows up or none was
   * read (the caller reads again).
   */
  private static Optional<PodEvents.Change> awaitChange(
      PodEvents.Subscription changes, Pod read, java.util.function.Predicate<Pod> done, long end)
      throws InterruptedException {
    String uid = read == null ? null : read.getMetadata().getUid();
    while (true) {
      Optional<PodEvents.Change> next = changes.next(end);
      if (next.isEmpty()) {
        return Optional.empty();
      }
      PodEvents.Change change = next.get();
      if (uid == null || !uid.equals(change.uid())) {
        if (change.deleted()) {
          continue; // an earlier pod of the name going: not the one read
        }
        return Optional.empty();
      }
      if (done.test(change.deleted() ? null : change.pod())) {
        return next;
      }
    }
  }

  private static final Duration WATCH_WINDOW = Duration.ofSeconds(1);

  private void checkStarting(String id, Pod pod) {
    if (pod == null) {
      throw failure(PodDiagnosis.POD_GONE, "pod of " + id + " was deleted while starting");
    }
    Optional<RuntimeFailure> fatal = PodDiagnosis.fatal(pod, false);
    if (fatal.isPresent()) {
      throw new RuntimeStartException(fatal.get());
    }
  }

  /** Events about {@code name} (the mock and the API select events by field only on name). */
  private List<Event> events(String name) {
    try {
      return client.v1().events().inNamespace(namespace).list().getItems().stream()
          .filter(e -> e.getInvolvedObject() != null)
          .filter(e -> name.equals(e.getInvolvedObject().getName()))
          .toList();
    } catch (KubernetesClientException e) {
      return List.of(); // no events readable (RBAC): the pod's own status must do
    }
  }

  private RuntimeHandle handle(String id) {
    return new RuntimeHandle(
        id, NAME, Map.of(NAMESPACE, namespace, POD, SandboxObjects.podName(id)));
  }

  // ---------------------------------------------------------------- inspect

  @Override
  public RuntimeState inspect(RuntimeHandle handle) {
    String id = handle.sandboxId();
    try {
      Pod pod = pods(id).get();
      PersistentVolumeClaim claim = claims().withName(SandboxObjects.claimName(id)).get();
      return state(id, Optional.ofNullable(pod), Optional.ofNullable(claim));
    } catch (KubernetesClientException e) {
      return error(new RuntimeFailure(Kind.ENGINE_UNREACHABLE, "inspect " + id + ": " + e));
    }
  }

  private RuntimeState state(String id, Optional<Pod> pod, Optional<PersistentVolumeClaim> claim) {
    boolean paused = claim.map(KubernetesBackend::paused).orElse(false);
    if (pod.isEmpty() || pod.get().getMetadata().getDeletionTimestamp() != null) {
      if (claim.isEmpty()) {
        return RuntimeState.missing();
      }
      if (paused) {
        return state(SandboxStatus.PAUSED);
      }
      return starting.contains(id)
          ? state(SandboxStatus.STARTING)
          : error(new RuntimeFailure(PodDiagnosis.POD_GONE, "pod of " + id + " is gone"));
    }
    Optional<RuntimeFailure> fatal = PodDiagnosis.fatal(pod.get(), true);
    if (fatal.isPresent()) {
      return error(fatal.get());
    }
    Optional<String> ip = ip(pod.get());
    if (ip.isPresent() && probe.answers(ip.get(), settings.agentPort())) {
      return new RuntimeState(SandboxStatus.RUNNING, urls(ip.get()), Optional.empty());
    }
    return state(SandboxStatus.STARTING);
  }

  private List<ExposedUrl> urls(String ip) {
    String host = ip.contains(":") ? "[" + ip + "]" : ip;
    int port = settings.agentPort();
    return List.of(new ExposedUrl(ExposedUrl.AGENT_SERVER, "http://" + host + ":" + port, port));
  }

  private static boolean paused(PersistentVolumeClaim claim) {
    Map<String, String> annotations = claim.getMetadata().getAnnotations();
    return annotations != null && "true".equals(annotations.get(SandboxObjects.ANNOTATION_PAUSED));
  }

  private static RuntimeState state(SandboxStatus status) {
    return new RuntimeState(status, List.of(), Optional.empty());
  }

  private static RuntimeState error(RuntimeFailure failure) {
    return new RuntimeState(SandboxStatus.ERROR, List.of(), Optional.of(failure));
  }

  // ---------------------------------------------------------------- pause, resume

  /**
   * Marks the claim paused, leaves only the admin digest in the Secret (the revoked session keys'
   * digests leave the cluster too), then deletes the pod and waits until it is gone: every process
   * of the sandbox has ended when this returns.
   */
  @Override
  public void pause(RuntimeHandle handle) {
    String id = handle.sandboxId();
    try {
      PersistentVolumeClaim claim = claims().withName(SandboxObjects.claimName(id)).get();
      if (claim == null) {
        return; // nothing left to pause: inspect says MISSING
      }
      if (!paused(claim)) {
        claims()
            .withName(SandboxObjects.claimName(id))
            .edit(
                c -> {
                  Map<String, String> annotations = new LinkedHashMap<>();
                  if (c.getMetadata().getAnnotations() != null) {
                    annotations.putAll(c.getMetadata().getAnnotations());
                  }
                  annotations.put(SandboxObjects.ANNOTATION_PAUSED, "true");
                  c.getMetadata().setAnnotations(annotations);
                  return c;
                });
      }
      keepOnlyAdminDigest(id);
      deletePodAndWait(id);
    } catch (KubernetesClientException e) {
      throw unreachable(id, e);
    }
  }

  @Override
  public RuntimeHandle resume(RuntimeHandle handle) {
    String id = handle.sandboxId();
    try {
      PersistentVolumeClaim claim = claims().withName(SandboxObjects.claimName(id)).get();
      if (claim == null) {
        throw failure(PodDiagnosis.POD_GONE, "the workspace claim of " + id + " is gone");
      }
      Pod current = pods(id).get();
      if (current != null && current.getMetadata().getDeletionTimestamp() == null) {
        if (PodDiagnosis.fatal(current, true).isEmpty()) {
          return awaitRunning(id); // already running (a repeated resume)
        }
        deletePodAndWait(id); // it crashed: a new pod on the same claim
      } else if (current != null) {
        deletePodAndWait(id);
      }
      keepOnlyAdminDigest(id);
      Pod pod =
          SandboxObjects.podOf(claim)
              .orElseThrow(() -> failure(Kind.UNKNOWN, "the claim of " + id + " names no pod"));
      pod.getMetadata().setResourceVersion(null);
      try (PodEvents.Subscription changes = podEvents.subscribe(pod.getMetadata().getName())) {
        Pod created = client.resource(pod).inNamespace(namespace).create();
        unmarkPaused(id);
        return awaitRunning(id, changes, created);
      }
    } catch (KubernetesClientException e) {
      throw asStartFailure(e, "resuming " + id);
    }
  }

  private void unmarkPaused(String id) {
    claims()
        .withName(SandboxObjects.claimName(id))
        .edit(
            c -> {
              Map<String, String> annotations =
                  new LinkedHashMap<>(c.getMetadata().getAnnotations());
              annotations.remove(SandboxObjects.ANNOTATION_PAUSED);
              c.getMetadata().setAnnotations(annotations);
              return c;
            });
  }

  /** The Secret rewritten to the admin digest it holds, so a new pod's agent takes no old key. */
  private void keepOnlyAdminDigest(String id) {
    Secret secret =
        client.secrets().inNamespace(namespace).withName(SandboxObjects.secretName(id)).get();
    if (secret == null) {
      throw failure(Kind.UNKNOWN, "the secret of " + id + " is gone");
    }
    AgentSecrets held = secretsOf(secret);
    if (held.sessionKeyDigests().isEmpty()) {
      return;
    }
    String admin = held.adminKeyDigests().isEmpty() ? "" : held.adminKeyDigests().getFirst();
    Secret replaced = objects.secret(id, List.of(), admin);
    client
        .secrets()
        .inNamespace(namespace)
        .withName(SandboxObjects.secretName(id))
        .edit(
            s -> {
              s.setData(replaced.getData());
              return s;
            });
  }

  private static AgentSecrets secretsOf(Secret secret) {
    String encoded =
        secret.getData() == null ? null : secret.getData().get(SandboxObjects.SECRETS_KEY);
    if (encoded == null) {
      return new AgentSecrets(List.of(), List.of());
    }
    try {
      return AgentSecrets.read(new ByteArrayInputStream(Base64.getDecoder().decode(encoded)));
    } catch (IOException | IllegalArgumentException e) {
      throw failure(Kind.UNKNOWN, "the secret " + secret.getMetadata().getName() + " is malformed");
    }
  }

  /** Deletes the pod with the configured grace and waits until the cluster has removed it. */
  private void deletePodAndWait(String id) {
    pods(id).withGracePeriod(settings.stopGrace().toSeconds()).delete();
    long wait = settings.stopGrace().plusSeconds(30).toMillis();
    try {
      awaitPod(id, Objects::isNull, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(wait));
    } catch (KubernetesClientTimeoutException e) {
      throw failure(
          Kind.UNKNOWN, "pod of " + id + " still exists " + wait + " ms after its delete");
    }
  }

  // ---------------------------------------------------------------- destroy, list

  /** Removes the pod (waiting until it is gone), the NetworkPolicy, the Secret and the claim. */
  @Override
  public void destroy(RuntimeHandle handle) {
    String id = handle.sandboxId();
    // Every step runs even if one before failed (a pod stuck terminating must not keep the
    // claim, secret and policy alive); the first failure is thrown at the end.
    List<Runnable> steps =
        List.of(
            () -> deletePodAndWait(id),
            () ->
                client
                    .network()
                    .v1()
                    .networkPolicies()
                    .inNamespace(namespace)
                    .withName(SandboxObjects.policyName(id))
                    .delete(),
            () ->
                client
                    .secrets()
                    .inNamespace(namespace)
                    .withName(SandboxObjects.secretName(id))
                    .delete(),
            () -> claims().withName(SandboxObjects.claimName(id)).delete());
    RuntimeException first = null;
    for (Runnable step : steps) {
      try {
        step.run();
      } catch (KubernetesClientException e) {
        first = keep(first, unreachable(id, e));
      } catch (RuntimeException e) {
        first = keep(first, e);
      }
    }
    if (first != null) {
      throw first;
    }
  }

  private static RuntimeException keep(RuntimeException first, RuntimeException next) {
    if (first == null) {
      return next;
    }
    first.addSuppressed(next);
    return first;
  }

  @Override
  public List<RuntimeHandle> list() {
    return listWithState().stream().map(ListedRuntime::handle).toList();
  }

  /**
   * One labelled list per kind (pods, claims, secrets, network policies), however many sandboxes:
   * every sandbox any of them names is reported, so the reconcile loop reaps half-made ones too.
   */
  @Override
  public List<ListedRuntime> listWithState() {
    Map<String, Pod> pods =
        bySandbox(
            client.pods().inNamespace(namespace).withLabels(objects.ours()).list().getItems());
    Map<String, PersistentVolumeClaim> claims =
        bySandbox(claims().withLabels(objects.ours()).list().getItems());
    Set<String> ids = new TreeSet<>(pods.keySet());
    ids.addAll(claims.keySet());
    ids.addAll(
        bySandbox(
                client
                    .secrets()
                    .inNamespace(namespace)
                    .withLabels(objects.ours())
                    .list()
                    .getItems())
            .keySet());
    ids.addAll(
        bySandbox(
                client
                    .network()
                    .v1()
                    .networkPolicies()
                    .inNamespace(namespace)
                    .withLabels(objects.ours())
                    .list()
                    .getItems())
            .keySet());
    ids.removeAll(starting);
    List<ListedRuntime> listed = new ArrayList<>();
    for (String id : ids) {
      RuntimeState state =
          state(id, Optional.ofNullable(pods.get(id)), Optional.ofNullable(claims.get(id)));
      listed.add(new ListedRuntime(handle(id), state));
    }
    return listed;
  }

  private static <T extends HasMetadata> Map<String, T> bySandbox(List<T> items) {
    Map<String, T> found = new LinkedHashMap<>();
    for (T item : items) {
      Map<String, String> labels = item.getMetadata().getLabels();
      String id = labels == null ? null : labels.get(SandboxObjects.LABEL_SANDBOX);
      if (id != null) {
        found.put(id, item);
      }
    }
    return found;
  }

  private io.fabric8.kubernetes.client.dsl.PodResource pods(String id) {
    return client.pods().inNamespace(namespace).withName(SandboxObjects.podName(id));
  }

  private io.fabric8.kubernetes.client.dsl.NonNamespaceOperation<
          PersistentVolumeClaim,
          io.fabric8.kubernetes.api.model.PersistentVolumeClaimList,
          io.fabric8.kubernetes.client.dsl.Resource<PersistentVolumeClaim>>
      claims() {
    return client.persistentVolumeClaims().inNamespace(namespace);
  }

  @Override
  public void close() {
    try {
      podEvents.close();
    } finally {
      client.close();
    }
  }

  // ---------------------------------------------------------------- failures

  private void removeQuietly(String id, RuntimeException failure) {
    try {
      destroy(handle(id));
    } catch (RuntimeException cleanup) {
      failure.addSuppressed(cleanup);
    }
  }

  private static SandboxException unreachable(String id, KubernetesClientException e) {
    return new SandboxException(
        "The Kubernetes API cannot be reached or refused the request right now.",
        Optional.of(id),
        e);
  }

  private static RuntimeStartException asStartFailure(RuntimeException e, String what) {
    if (e instanceof RuntimeStartException start) {
      return start;
    }
    if (e instanceof KubernetesClientException api) {
      Kind kind = api.getCode() == 0 || api.getCode() >= 500 ? Kind.ENGINE_UNREACHABLE : API_ERROR;
      return new RuntimeStartException(
          new RuntimeFailure(kind, what + ": " + api.getCode() + " " + api.getMessage()), e);
    }
    return new RuntimeStartException(new RuntimeFailure(Kind.UNKNOWN, what + ": " + e), e);
  }

  static RuntimeStartException failure(Kind kind, String detail) {
    return new RuntimeStartException(new RuntimeFailure(kind, detail));
  }
}
