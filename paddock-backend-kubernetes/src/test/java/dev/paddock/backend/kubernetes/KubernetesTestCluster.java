package dev.paddock.backend.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.controlplane.MarkedProcesses;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Assumptions;

/**
 * The cluster the Kubernetes backend's tests run on, reusable from other modules (this module's
 * test-jar): by default <strong>not a real cluster</strong> but fabric8's mock API server in CRUD
 * mode on loopback with a {@link FakeKubelet} running each pod's agent as a local process. With the
 * system property {@code paddock.test.kubernetes=cluster} (Maven profile {@code real-cluster}) it
 * is the real cluster {@code KUBECONFIG} names instead, and tests are skipped when that is unset.
 *
 * <pre>{@code
 * KubernetesTestCluster cluster = KubernetesTestCluster.start();
 * SandboxBackend backend = new KubernetesBackendProvider().create(cluster.settings(Map.of()));
 * ...
 * cluster.assertNothingLeaked();   // after each test
 * cluster.close();                 // after all
 * }</pre>
 */
public final class KubernetesTestCluster implements AutoCloseable {
  /** The namespace the tests' sandboxes live in. */
  public static final String NAMESPACE = "test";

  /** The {@code paddock.instance} label the tests' backends use. */
  public static final String INSTANCE = "contract";

  /** The user agent of {@link #client()} (the tests' and the fake kubelet's), not the backend's. */
  static final String TEST_AGENT = "paddock-test-cluster";

  private final Optional<KubernetesMockServer> server;
  private final Optional<TracedDispatcher> dispatcher;
  private final KubernetesClient client;
  private final Optional<FakeKubelet> kubelet;
  private final Map<String, String> settings;
  private final Set<String> markedBefore = MarkedProcesses.snapshot();

  private KubernetesTestCluster(
      Optional<KubernetesMockServer> server,
      Optional<TracedDispatcher> dispatcher,
      KubernetesClient client,
      Optional<FakeKubelet> kubelet,
      Map<String, String> settings) {
    this.server = server;
    this.dispatcher = dispatcher;
    this.client = client;
    this.kubelet = kubelet;
    this.settings = Map.copyOf(settings);
  }

  /** The mock server and fake kubelet, or the real cluster (see the class comment). */
  public static KubernetesTestCluster start() {
    if ("cluster".equals(System.getProperty("paddock.test.kubernetes"))) {
      return real();
    }
    Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
    TracedDispatcher dispatcher = new TracedDispatcher(responses);
    KubernetesMockServer server =
        new KubernetesMockServer(new Context(), new MockWebServer(), responses, dispatcher, false);
    try {
      server.init(InetAddress.getByName("127.0.0.1"), 0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    KubernetesClient client =
        server.createClient(b -> b.editOrNewConfig().withUserAgent(TEST_AGENT).endConfig());
    int port = freePort();
    FakeKubelet kubelet = new FakeKubelet(client, NAMESPACE, port);
    Map<String, String> settings = new LinkedHashMap<>();
    settings.put("kubernetes.api-url", "http://127.0.0.1:" + server.getPort());
    settings.put("kubernetes.namespace", NAMESPACE);
    settings.put("kubernetes.agent-port", Integer.toString(port));
    settings.put("kubernetes.instance", INSTANCE);
    settings.put("kubernetes.stop-grace", "3s");
    return new KubernetesTestCluster(
        Optional.of(server), Optional.of(dispatcher), client, Optional.of(kubelet), settings);
  }

  private static KubernetesTestCluster real() {
    String kubeconfig = System.getenv("KUBECONFIG");
    Assumptions.assumeTrue(
        kubeconfig != null && !kubeconfig.isBlank(),
        "paddock.test.kubernetes=cluster needs KUBECONFIG naming the cluster to test on");
    String namespace = System.getenv().getOrDefault("PADDOCK_TEST_NAMESPACE", "paddock-test");
    Map<String, String> settings = new LinkedHashMap<>();
    settings.put("kubernetes.namespace", namespace);
    settings.put("kubernetes.instance", INSTANCE);
    KubernetesClient client = new KubernetesClientBuilder().build();
    return new KubernetesTestCluster(
        Optional.empty(), Optional.empty(), client, Optional.empty(), settings);
  }

  /** The backend settings for this cluster, {@code overrides} over them. */
  public Map<String, String> settings(Map<String, String> overrides) {
    Map<String, String> merged = new LinkedHashMap<>(settings);
    merged.putAll(overrides);
    return merged;
  }

  /** A client of the cluster (the tests' own; the backend makes its own). */
  public KubernetesClient client() {
    return client;
  }

  /**
   * The requests the mock server has answered so far from clients other than {@link #client()} (the
   * backends'), as {@code "METHOD path"}, oldest first; empty on a real cluster.
   */
  public Optional<List<String>> backendRequests() {
    return dispatcher.map(TracedDispatcher::backendRequests);
  }

  /** The fake kubelet; empty on a real cluster. */
  public Optional<FakeKubelet> kubelet() {
    return kubelet;
  }

  /**
   * Fails while anything labelled {@code paddock.managed=true} is left in the namespace, an agent
   * process runs, or a claim's directory is left (each checked until 15 s pass).
   */
  public void assertNothingLeaked() {
    Awaitility.await("nothing of the sandboxes left in the cluster")
        .atMost(Duration.ofSeconds(15))
        .pollInterval(Duration.ofMillis(50))
        .untilAsserted(
            () -> {
              assertThat(managedObjects()).as("objects left behind").isEmpty();
              kubelet.ifPresent(
                  k -> {
                    assertThat(k.runningAgents()).as("agents left running").isZero();
                    assertThat(k.claimDirectories()).as("claim directories left").isEmpty();
                  });
              assertThat(ProcessHandle.current().descendants().filter(ProcessHandle::isAlive))
                  .as("processes left behind")
                  .isEmpty();
              assertThat(MarkedProcesses.newSince(markedBefore))
                  .as("Paddock-marked processes left on the machine (orphans included)")
                  .isEmpty();
            });
  }

  /** Kind/name of every pod, claim, Secret and policy labelled {@code paddock.managed=true}. */
  public List<String> managedObjects() {
    Map<String, String> labels = Map.of("paddock.managed", "true");
    List<HasMetadata> left = new java.util.ArrayList<>();
    left.addAll(client.pods().inNamespace(namespace()).withLabels(labels).list().getItems());
    left.addAll(
        client
            .persistentVolumeClaims()
            .inNamespace(namespace())
            .withLabels(labels)
            .list()
            .getItems());
    left.addAll(client.secrets().inNamespace(namespace()).withLabels(labels).list().getItems());
    left.addAll(
        client
            .network()
            .v1()
            .networkPolicies()
            .inNamespace(namespace())
            .withLabels(labels)
            .list()
            .getItems());
    return left.stream().map(o -> o.getKind() + "/" + o.getMetadata().getName()).toList();
  }

  private String namespace() {
    return settings.get("kubernetes.namespace");
  }

  @Override
  public void close() {
    kubelet.ifPresent(FakeKubelet::close);
    client.close();
    server.ifPresent(KubernetesMockServer::destroy);
  }

  /**
   * The mock's CRUD dispatcher, keeping the request line of each request not from {@link #client()}
   * and saying at TRACE (logger {@code paddock.test.mock-api}, JUL: FINER) each request it handled
   * and how long it took, for {@code KubernetesBench --trace}.
   */
  private static final class TracedDispatcher extends KubernetesMixedDispatcher {
    private static final System.Logger LOG = System.getLogger("paddock.test.mock-api");

    private final Queue<String> backendRequests = new ConcurrentLinkedQueue<>();

    TracedDispatcher(Map<ServerRequest, Queue<ServerResponse>> responses) {
      super(responses);
    }

    List<String> backendRequests() {
      return List.copyOf(backendRequests);
    }

    @Override
    public MockResponse dispatch(RecordedRequest request) {
      if (!TEST_AGENT.equals(request.getHeader("User-Agent"))) {
        backendRequests.add(request.getMethod() + " " + request.getPath());
      }
      if (!LOG.isLoggable(System.Logger.Level.TRACE)) {
        return super.dispatch(request);
      }
      long t0 = System.nanoTime();
      MockResponse response = super.dispatch(request);
      LOG.log(
          System.Logger.Level.TRACE,
          "{0} {1} answered in {2} us",
          request.getMethod(),
          request.getPath(),
          (System.nanoTime() - t0) / 1000);
      return response;
    }
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
