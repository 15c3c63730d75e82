package dev.paddock.archive.s3;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.ArchiveStore;
import java.net.URI;
import java.time.Duration;
import java.util.Properties;
import org.awaitility.Awaitility;
import org.eclipse.jetty.util.component.AbstractLifeCycle;
import org.gaul.s3proxy.AuthenticationType;
import org.gaul.s3proxy.S3Proxy;
import org.jclouds.ContextBuilder;
import org.jclouds.blobstore.BlobStoreContext;

/**
 * A real S3 API server in this JVM: s3proxy over jclouds' in-memory ("transient") blob store, on a
 * loopback port 0, with SigV4 authentication and one bucket. Not a mock: requests go over HTTP
 * through s3proxy's S3 protocol implementation (signatures, multipart, listing, ranges). Close it
 * to stop the server and drop every object.
 */
public final class InProcessS3 implements AutoCloseable {
  public static final String ACCESS_KEY_ID = "paddock-test-access-key";
  public static final String SECRET_ACCESS_KEY = "paddock-test-secret-key-0123456789";
  public static final String BUCKET = "paddock-archives";

  private final BlobStoreContext context;
  private final S3Proxy proxy;

  private InProcessS3(BlobStoreContext context, S3Proxy proxy) {
    this.context = context;
    this.proxy = proxy;
  }

  /** Starts the server with {@link #BUCKET} created; returns once it accepts requests. */
  public static InProcessS3 start() throws Exception {
    BlobStoreContext context =
        ContextBuilder.newBuilder("transient")
            .credentials("unused", "unused")
            .overrides(new Properties())
            .build(BlobStoreContext.class);
    S3Proxy proxy =
        S3Proxy.builder()
            .blobStore(context.getBlobStore())
            .endpoint(URI.create("http://127.0.0.1:0"))
            .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, ACCESS_KEY_ID, SECRET_ACCESS_KEY)
            .build();
    try {
      proxy.start();
      Awaitility.await("s3proxy started")
          .atMost(Duration.ofSeconds(30))
          .until(() -> AbstractLifeCycle.STARTED.equals(proxy.getState()));
      context.getBlobStore().createContainerInLocation(null, BUCKET);
    } catch (Exception | Error e) {
      stopQuietly(proxy, e);
      context.close();
      throw e;
    }
    return new InProcessS3(context, proxy);
  }

  private static void stopQuietly(S3Proxy proxy, Throwable cause) {
    try {
      proxy.stop();
    } catch (Exception e) {
      cause.addSuppressed(e);
    }
  }

  /** The server's base URL, {@code http://127.0.0.1:<port>}. */
  public URI endpoint() {
    return URI.create("http://127.0.0.1:" + proxy.getPort());
  }

  /** A config for {@link #BUCKET} on this server: path style, static test credentials. */
  public S3ArchiveConfig config() {
    return S3ArchiveConfig.of(BUCKET)
        .withEndpoint(endpoint(), true)
        .withCredentials(new S3ArchiveConfig.Credentials(ACCESS_KEY_ID, SECRET_ACCESS_KEY));
  }

  /** A store on this server, to be closed by the caller. */
  public ArchiveStore store() {
    return S3ArchiveStores.create(config());
  }

  /** How many objects the bucket holds (for leak checks). */
  public long objectCount() {
    return context.getBlobStore().countBlobs(BUCKET);
  }

  /** The ETag the server gave {@code key}, quotes included. */
  public String etag(String key) {
    return context.getBlobStore().blobMetadata(BUCKET, key).getETag();
  }

  /** Removes {@code key} from the bucket (the store itself never deletes). */
  public void delete(String key) {
    context.getBlobStore().removeBlob(BUCKET, key);
  }

  @Override
  public void close() {
    try {
      proxy.stop();
      assertThat(proxy.getState()).isEqualTo(AbstractLifeCycle.STOPPED);
    } catch (Exception e) {
      throw new IllegalStateException("s3proxy did not stop", e);
    } finally {
      context.close();
    }
  }
}
