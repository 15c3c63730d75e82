package dev.paddock.backend.kubernetes;

import dev.paddock.backend.kit.protocol.ReadyLine;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerStateBuilder;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * A stand-in for the kubelet, the scheduler and the volume provisioner, for tests against fabric8's
 * mock API server (which stores objects but runs no controller). It watches the namespace's pods
 * and, for each new one, acts on the watch event at once, from the event's copy of the pod, and
 * does what a node would: puts a finalizer on it (so a delete waits, as graceful deletion does,
 * until the containers are killed), gives it its own loopback address ({@code 127.1.x.y}, so every
 * pod can listen on the same container port, as pods do on their own IPs), turns its volumes into
 * directories (a claim's directory lives until the claim is deleted, emptyDirs and secret volumes
 * until the pod goes; a Secret's data is written as files, the directory then made read-only like a
 * secret mount), and runs its container's arguments with the agent-server from this JVM's class
 * path as a child process, with the mount paths and {@code --host 0.0.0.0} mapped onto those
 * directories and that address. Like a kubelet, it starts the container as soon as the pod's
 * volumes are ready and writes the status afterwards: the finalizer write and the Secret read run
 * at once, the agent is spawned when both are done (never before the finalizer is on), and the
 * status follows while the agent starts. Each write is one JSON patch built on the event's copy (no
 * read before it), whose {@code test} of the uid refuses it for a later pod of the same name. An
 * earlier version read the pod before each write and wrote the status twice (again on the agent's
 * ready line): three requests in turn before the spawn, three more while the agent started and two
 * as it answered its first request, on the same two cores (docs/BENCHMARKS.md, Kubernetes). It
 * writes the pod's status back as the kubelet would: {@code Running} and {@code Ready} with the pod
 * IP once the process runs (the container has no readiness probe: a kubelet reports such a
 * container ready once it runs; the backend asks the agent itself), {@code Failed} with the exit
 * code and the last output lines as the termination message ({@code FallbackToLogsOnError}) when it
 * ends on its own; when the pod is deleted it kills the process tree, removes the pod's directories
 * and the finalizer.
 *
 * <p>What it does not do: run the image (the agent runs on this host's JDK, the sandbox's commands
 * on this host's shell), apply the pod's security context, resources or network policy (the tests
 * assert those on the manifest instead), run the init container (the bundle is on the class path).
 * For start-failure tests {@link #failImage} makes pods of an image report what a real cluster
 * reports (a waiting reason, an unschedulable condition with its event) instead of running.
 * Thread-safe.
 */
public final class FakeKubelet implements AutoCloseable {
  static final String FINALIZER = "paddock.test/fake-kubelet";

  private static final System.Logger LOG = System.getLogger("paddock.test.fake-kubelet");

  private final KubernetesClient client;
  private final String namespace;
  private final int agentPort;
  private final Path root;
  private final AtomicInteger addresses = new AtomicInteger(1);
  private final Map<String, RunningPod> running = new ConcurrentHashMap<>();
  private final Map<String, Failure> failures = new ConcurrentHashMap<>();
  private final Map<String, Stamps> stamps = new ConcurrentHashMap<>();
  private final Watch pods;
  private final Watch claims;

  /**
   * What a pod of some image reports instead of running.
   *
   * @param waitingReason the container's waiting reason (e.g. {@code ImagePullBackOff}), if any
   * @param unschedulableMessage the scheduler's {@code PodScheduled=False} message, if any
   * @param message the waiting message
   */
  public record Failure(
      Optional<String> waitingReason, Optional<String> unschedulableMessage, String message) {
    /** A container waiting with {@code reason} and {@code message}, as the kubelet reports. */
    public static Failure waiting(String reason, String message) {
      return new Failure(Optional.of(reason), Optional.empty(), message);
    }

    /** A pod the scheduler cannot place, with its message ("0/3 nodes are available: ..."). */
    public static Failure unschedulable(String message) {
      return new Failure(Optional.empty(), Optional.of(message), message);
    }
  }

  /**
   * When this stand-in, for one pod, got the watch event that announced it, spawned its agent, and
   * read the agent's ready line ({@link System#nanoTime} values; 0: not yet). For the bench, which
   * reports the stand-in's own reaction apart from the backend's time.
   */
  public record StartTimes(long announced, long spawned, long readyLine) {}

  /** The stamps of one pod (of {@code uid}), filled in as it starts. */
  private static final class Stamps {
    final String uid;
    final long announced;
    volatile long spawned;
    volatile long readyLine;

    Stamps(String uid, long announced) {
      this.uid = uid;
      this.announced = announced;
    }
  }

  private void stamp(String name, String uid, java.util.function.Consumer<Stamps> change) {
    Stamps current = stamps.get(name);
    if (current != null && current.uid.equals(uid)) {
      change.accept(current);
    }
  }

  /** A pod's agent; the uid tells a pod from a later one of the same name (a resume's). */
  private record RunningPod(String uid, Process process, Path dir) {}

  FakeKubelet(KubernetesClient client, String namespace, int agentPort) {
    this.client = client;
    this.namespace = namespace;
    this.agentPort = agentPort;
    try {
      this.root = Files.createTempDirectory("paddock-fake-kubelet-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    this.pods = client.pods().inNamespace(namespace).watch(new PodWatcher());
    this.claims = client.persistentVolumeClaims().inNamespace(namespace).watch(new ClaimWatcher());
  }

  /** Pods of {@code image} report {@code failure} from now on instead of running. */
  public void failImage(String image, Failure failure) {
    failures.put(image, failure);
  }

  /** The pid of the agent process of a running sandbox's pod, if one runs. */
  public java.util.OptionalLong agentPid(String sandboxId) {
    RunningPod pod = running.get(SandboxObjects.podName(sandboxId));
    return pod == null || !pod.process().isAlive()
        ? java.util.OptionalLong.empty()
        : java.util.OptionalLong.of(pod.process().pid());
  }

  /** The start of the running sandbox's pod as this kubelet saw it, until the pod is stopped. */
  public Optional<StartTimes> startTimes(String sandboxId) {
    Stamps s = stamps.get(SandboxObjects.podName(sandboxId));
    return s == null
        ? Optional.empty()
        : Optional.of(new StartTimes(s.announced, s.spawned, s.readyLine));
  }

  /** How many agent processes run now. */
  public int runningAgents() {
    return (int) running.values().stream().filter(p -> p.process().isAlive()).count();
  }

  /** The directories of claims that still exist (a deleted claim's directory is removed). */
  public List<Path> claimDirectories() {
    Path claimsDir = root.resolve("claims");
    if (!Files.isDirectory(claimsDir)) {
      return List.of();
    }
    try (Stream<Path> dirs = Files.list(claimsDir)) {
      return dirs.toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  // ---------------------------------------------------------------- pods

  private final class PodWatcher implements Watcher<Pod> {
    @Override
    public void eventReceived(Action action, Pod pod) {
      String name = pod.getMetadata().getName();
      String uid = pod.getMetadata().getUid();
      trace("watch event {0} pod {1}", action, name);
      if (action == Action.DELETED) {
        stop(name, uid);
      } else if (pod.getMetadata().getDeletionTimestamp() != null) {
        Thread.ofVirtual().start(() -> terminate(name, uid));
      } else if (action == Action.ADDED && !runs(name, uid)) {
        stamps.put(name, new Stamps(uid, System.nanoTime()));
        Thread.ofVirtual().start(() -> admit(pod));
      }
    }

    @Override
    public void onClose(WatcherException cause) {
      LOG.log(System.Logger.Level.DEBUG, "pod watch closed: {0}", cause.getMessage());
    }
  }

  private final class ClaimWatcher implements Watcher<PersistentVolumeClaim> {
    @Override
    public void eventReceived(Action action, PersistentVolumeClaim claim) {
      if (action == Action.DELETED) {
        deleteTree(root.resolve("claims").resolve(claim.getMetadata().getName()));
      }
    }

    @Override
    public void onClose(WatcherException cause) {
      LOG.log(System.Logger.Level.DEBUG, "claim watch closed: {0}", cause.getMessage());
    }
  }

  /** One step of a pod's life here, at TRACE (JUL: FINER): {@code KubernetesBench --trace}. */
  private static void trace(String format, Object... args) {
    LOG.log(System.Logger.Level.TRACE, format, args);
  }

  private boolean runs(String name, String uid) {
    RunningPod pod = running.get(name);
    return pod != null && pod.uid().equals(uid);
  }

  /**
   * Runs a pod the watch just announced, from the event's own copy of it, as a kubelet does: the
   * finalizer write (one JSON patch, refused unless the pod is still this very one) and the volume
   * set-up (the Secret read) go at once, the agent is spawned as soon as both are done, and the
   * status is written after the spawn (the agent starts meanwhile).
   */
  private void admit(Pod pod) {
    String name = pod.getMetadata().getName();
    String uid = pod.getMetadata().getUid();
    try {
      Container container = pod.getSpec().getContainers().getFirst();
      Failure failure = failures.get(container.getImage());
      if (failure != null) {
        if (hold(pod)) {
          report(pod, failed(pod, container, failure));
        }
        return;
      }
      run(pod, container);
    } catch (KubernetesClientException e) {
      // Deleted before it got this far: nothing to run.
      LOG.log(System.Logger.Level.DEBUG, "pod {0} gone before it ran: {1}", name, e.getMessage());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Puts the finalizer on {@code pod} if its name still names this very pod (a JSON patch whose
   * {@code test} of the uid fails otherwise); false, with the finalizer released again, when its
   * delete was asked for meanwhile.
   *
   * @throws KubernetesClientException when the pod is gone or another pod has its name
   */
  private boolean hold(Pod pod) {
    String name = pod.getMetadata().getName();
    String uid = pod.getMetadata().getUid();
    Pod held =
        client
            .pods()
            .inNamespace(namespace)
            .resource(pod) // the event's copy: no read before the patch
            .patch(
                PatchContext.of(PatchType.JSON),
                "[{\"op\":\"test\",\"path\":\"/metadata/uid\",\"value\":\""
                    + uid
                    + "\"},{\"op\":\"add\",\"path\":\"/metadata/finalizers\",\"value\":[\""
                    + FINALIZER
                    + "\"]}]");
    trace("finalizer on pod {0}", name);
    if (held.getMetadata().getDeletionTimestamp() != null) {
      terminate(name, uid);
      return false;
    }
    return true;
  }

  private void run(Pod pod, Container container) throws IOException {
    String name = pod.getMetadata().getName();
    String uid = pod.getMetadata().getUid();
    FutureTask<Boolean> held = new FutureTask<>(() -> hold(pod));
    Thread.ofVirtual().start(held);
    String ip = "127.1." + (addresses.get() / 250) + "." + (addresses.getAndIncrement() % 250 + 1);
    Path podDir = Files.createDirectories(root.resolve("pods").resolve(name + "-" + uid));
    Map<String, Path> mounts = mounts(pod, container, podDir);
    if (!admitted(held, name)) {
      deleteTree(podDir);
      return;
    }
    List<String> argv = new ArrayList<>(agentCommand());
    List<String> args = container.getArgs();
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      argv.add(i > 0 && args.get(i - 1).equals("--host") ? ip : mapped(arg, mounts));
    }
    ProcessBuilder builder = new ProcessBuilder(argv).redirectErrorStream(true);
    builder.directory(mounts.getOrDefault(container.getWorkingDir(), podDir).toFile());
    Map<String, String> env = builder.environment();
    env.keySet().removeIf(k -> !k.equals("PATH") && !k.equals("LANG"));
    for (EnvVar var : container.getEnv()) {
      env.put(var.getName(), var.getValue() == null ? "" : var.getValue());
    }
    Process process = builder.start();
    stamp(name, uid, s -> s.spawned = System.nanoTime());
    trace("spawned the agent of pod {0}: pid {1}", name, process.pid());
    RunningPod previous = running.put(name, new RunningPod(uid, process, podDir));
    if (previous != null) {
      killTree(previous.process()); // an older pod of the name, whose delete has not come yet
      deleteTree(previous.dir());
    }
    Optional<Pod> reported = report(pod, status(pod, ip));
    if (reported.isEmpty() || reported.get().getMetadata().getDeletionTimestamp() != null) {
      terminate(name, uid); // deleted while it was being set up: its delete found nothing to kill
      return;
    }
    trace("status of pod {0} written: Running, ip {1}", name, ip);
    Deque<String> tail = new ArrayDeque<>();
    try (BufferedReader out =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = out.readLine()) != null; ) {
        if (ReadyLine.parse(line).isPresent()) {
          stamp(name, uid, s -> s.readyLine = System.nanoTime());
          trace("ready line of pod {0} read", name);
        }
        tail.addLast(line);
        if (tail.size() > 20) {
          tail.removeFirst();
        }
      }
    } catch (IOException e) {
      RunningPod still = running.get(name);
      if (still != null && still.process() == process) {
        throw e;
      }
      return; // killed for its pod's delete, which closed the output under this reader
    }
    int code = waitFor(process);
    RunningPod still = running.get(name);
    if (still != null && still.process() == process) {
      // It ended on its own (not killed for a delete): Failed, as restartPolicy Never leaves it.
      report(pod, exited(pod, ip, code, String.join("\n", tail)));
    }
  }

  /** Whether the finalizer went on: false when the pod went or is going meanwhile. */
  private static boolean admitted(FutureTask<Boolean> held, String name) {
    try {
      return held.get();
    } catch (ExecutionException e) {
      LOG.log(
          System.Logger.Level.DEBUG,
          "pod {0} gone before it ran: {1}",
          name,
          e.getCause().toString());
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** Each mount path of the container, mapped to a directory on this host. */
  private Map<String, Path> mounts(Pod pod, Container container, Path podDir) throws IOException {
    Map<String, Volume> volumes = new LinkedHashMap<>();
    pod.getSpec().getVolumes().forEach(v -> volumes.put(v.getName(), v));
    Map<String, Path> mounts = new LinkedHashMap<>();
    for (VolumeMount mount : container.getVolumeMounts()) {
      Volume volume = volumes.get(mount.getName());
      Path dir;
      if (volume.getPersistentVolumeClaim() != null) {
        dir = root.resolve("claims").resolve(volume.getPersistentVolumeClaim().getClaimName());
        Files.createDirectories(dir);
      } else if (volume.getSecret() != null) {
        dir = Files.createDirectories(podDir.resolve(volume.getName()));
        writeSecret(volume.getSecret().getSecretName(), dir);
      } else {
        dir = Files.createDirectories(podDir.resolve(volume.getName()));
      }
      mounts.put(mount.getMountPath(), dir);
    }
    return mounts;
  }

  private void writeSecret(String secretName, Path dir) throws IOException {
    Secret secret = client.secrets().inNamespace(namespace).withName(secretName).get();
    if (secret == null) {
      throw new IOException("secret " + secretName + " not found");
    }
    trace("secret {0} read", secretName);
    for (Map.Entry<String, String> entry : secret.getData().entrySet()) {
      Files.write(dir.resolve(entry.getKey()), Base64.getDecoder().decode(entry.getValue()));
    }
    // A secret volume is mounted read-only: the agent leaves the file where it is.
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("r-xr-x---"));
  }

  private static String mapped(String arg, Map<String, Path> mounts) {
    for (Map.Entry<String, Path> mount : mounts.entrySet()) {
      String path = mount.getKey();
      if (arg.equals(path) || arg.startsWith(path + "/")) {
        return mount.getValue() + arg.substring(path.length());
      }
    }
    return arg;
  }

  private static List<String> agentCommand() {
    return List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-XX:TieredStopAtLevel=1",
        "-XX:+UseSerialGC",
        "-Xmx64m",
        "-XX:-UsePerfData",
        "-Xshare:auto",
        "-cp",
        absoluteClassPath(),
        "dev.paddock.agent.AgentServerMain");
  }

  // The agent runs in the pod's working directory: relative entries would not resolve there.
  private static String absoluteClassPath() {
    return java.util.Arrays.stream(
            System.getProperty("java.class.path").split(java.io.File.pathSeparator))
        .map(entry -> Path.of(entry).toAbsolutePath().toString())
        .collect(java.util.stream.Collectors.joining(java.io.File.pathSeparator));
  }

  // ---------------------------------------------------------------- status

  /**
   * Running, with its IP, and ready: the pod's container has no readiness probe, and a kubelet
   * reports such a container ready as soon as it runs.
   */
  private PodStatus status(Pod pod, String ip) {
    String now = Instant.now().toString();
    ContainerStatus container =
        new ContainerStatusBuilder()
            .withName(pod.getSpec().getContainers().getFirst().getName())
            .withReady(true)
            .withStarted(true)
            .withState(
                new ContainerStateBuilder()
                    .withNewRunning()
                    .withStartedAt(now)
                    .endRunning()
                    .build())
            .build();
    return new PodStatusBuilder()
        .withPhase("Running")
        .withPodIP(ip)
        .withHostIP("127.0.0.1")
        .withStartTime(now)
        .withConditions(
            condition("PodScheduled", "True", null, null),
            condition("Initialized", "True", null, null),
            condition("ContainersReady", "True", null, null),
            condition("Ready", "True", null, null))
        .withContainerStatuses(container)
        .build();
  }

  private PodStatus exited(Pod pod, String ip, int code, String tail) {
    ContainerStatus container =
        new ContainerStatusBuilder()
            .withName(pod.getSpec().getContainers().getFirst().getName())
            .withReady(false)
            .withState(
                new ContainerStateBuilder()
                    .withNewTerminated()
                    .withExitCode(code)
                    .withReason(code == 0 ? "Completed" : "Error")
                    .withMessage(tail)
                    .withFinishedAt(Instant.now().toString())
                    .endTerminated()
                    .build())
            .build();
    return new PodStatusBuilder()
        .withPhase(code == 0 ? "Succeeded" : "Failed")
        .withPodIP(ip)
        .withConditions(condition("Ready", "False", "PodFailed", null))
        .withContainerStatuses(container)
        .build();
  }

  private PodStatus failed(Pod pod, Container container, Failure failure) {
    if (failure.unschedulableMessage().isPresent()) {
      String message = failure.unschedulableMessage().get();
      client
          .v1()
          .events()
          .inNamespace(namespace)
          .resource(
              new EventBuilder()
                  .withNewMetadata()
                  .withName(pod.getMetadata().getName() + ".fake-scheduler")
                  .endMetadata()
                  .withNewInvolvedObject()
                  .withKind("Pod")
                  .withName(pod.getMetadata().getName())
                  .withNamespace(namespace)
                  .endInvolvedObject()
                  .withReason("FailedScheduling")
                  .withType("Warning")
                  .withMessage(message)
                  .build())
          .create();
      return new PodStatusBuilder()
          .withPhase("Pending")
          .withConditions(condition("PodScheduled", "False", "Unschedulable", message))
          .build();
    }
    ContainerStatus waiting =
        new ContainerStatusBuilder()
            .withName(container.getName())
            .withImage(container.getImage())
            .withReady(false)
            .withState(
                new ContainerStateBuilder()
                    .withNewWaiting()
                    .withReason(failure.waitingReason().orElseThrow())
                    .withMessage(failure.message())
                    .endWaiting()
                    .build())
            .build();
    return new PodStatusBuilder()
        .withPhase("Pending")
        .withConditions(condition("PodScheduled", "True", null, null))
        .withContainerStatuses(waiting)
        .build();
  }

  private static PodCondition condition(String type, String status, String reason, String message) {
    return new PodConditionBuilder()
        .withType(type)
        .withStatus(status)
        .withReason(reason)
        .withMessage(message)
        .withLastTransitionTime(Instant.now().toString())
        .build();
  }

  /**
   * Writes {@code status} as the pod's status, in one JSON patch of its status whose {@code test}
   * refuses it for any other pod of the same name (a later one, a resume's); the pod as written,
   * empty when it is gone or another pod has its name.
   */
  private Optional<Pod> report(Pod pod, PodStatus status) {
    String name = pod.getMetadata().getName();
    try {
      return Optional.of(
          client
              .pods()
              .inNamespace(namespace)
              .resource(pod)
              .status()
              .patch(
                  PatchContext.of(PatchType.JSON),
                  "[{\"op\":\"test\",\"path\":\"/metadata/uid\",\"value\":\""
                      + pod.getMetadata().getUid()
                      + "\"},{\"op\":\"add\",\"path\":\"/status\",\"value\":"
                      + client.getKubernetesSerialization().asJson(status)
                      + "}]"));
    } catch (KubernetesClientException e) {
      // The pod went meanwhile: there is nobody to report to.
      LOG.log(System.Logger.Level.DEBUG, "status of {0} not written: {1}", name, e.getMessage());
      return Optional.empty();
    }
  }

  // ---------------------------------------------------------------- deletion

  /** A delete asked for: kill the containers, remove the pod's directories, let the pod go. */
  private void terminate(String name, String uid) {
    stop(name, uid);
    // A status write racing this one (the mock does not check resource versions) can put the
    // finalizer back: release it until this pod is really gone, as a node keeps reconciling. A
    // later pod of the same name (a resume's) is not this one's to release.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      try {
        Pod now = client.pods().inNamespace(namespace).withName(name).get();
        if (now == null || !uid.equals(now.getMetadata().getUid())) {
          break;
        }
        client
            .pods()
            .inNamespace(namespace)
            .withName(name)
            .edit(
                p -> {
                  if (uid.equals(p.getMetadata().getUid())) {
                    p.getMetadata().setFinalizers(List.of());
                  }
                  return p;
                });
        client
            .pods()
            .inNamespace(namespace)
            .withName(name)
            .waitUntilCondition(
                p -> p == null || !uid.equals(p.getMetadata().getUid()),
                200,
                TimeUnit.MILLISECONDS);
        break;
      } catch (KubernetesClientException e) {
        LOG.log(System.Logger.Level.DEBUG, "pod {0} not released yet: {1}", name, e.getMessage());
      }
    }
    deleteEvents(name);
  }

  private void deleteEvents(String name) {
    client.v1().events().inNamespace(namespace).list().getItems().stream()
        .filter(e -> e.getInvolvedObject() != null && name.equals(e.getInvolvedObject().getName()))
        .forEach(e -> client.resource(e).inNamespace(namespace).delete());
  }

  /** Stops the agent of pod {@code name} if it is the one of {@code uid}. */
  private void stop(String name, String uid) {
    RunningPod pod = running.get(name);
    stamps.computeIfPresent(name, (n, s) -> s.uid.equals(uid) ? null : s);
    if (pod != null && pod.uid().equals(uid) && running.remove(name, pod)) {
      killTree(pod.process());
      deleteTree(pod.dir());
    }
  }

  private static void killTree(Process process) {
    process.descendants().forEach(ProcessHandle::destroyForcibly);
    process.destroyForcibly();
    waitFor(process);
    process.descendants().forEach(ProcessHandle::destroyForcibly);
  }

  private static int waitFor(Process process) {
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
      return process.waitFor();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  private static void deleteTree(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        if (Files.isDirectory(p)) {
          Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwx------"));
        }
      }
    } catch (IOException e) {
      // removed meanwhile
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot remove " + dir, e);
    }
  }

  /** Stops watching, kills every agent still running and removes its directories. */
  @Override
  public void close() {
    pods.close();
    claims.close();
    List.copyOf(running.entrySet()).forEach(e -> stop(e.getKey(), e.getValue().uid()));
    deleteTree(root);
  }
}
