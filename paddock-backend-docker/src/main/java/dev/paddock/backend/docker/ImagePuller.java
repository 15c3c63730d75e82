package dev.paddock.backend.docker;

import dev.paddock.api.spi.RuntimeFailure.Kind;
import dev.paddock.backend.docker.DockerEngine.EngineException;
import dev.paddock.backend.docker.DockerEngine.Response;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** Makes sure a spec's image is on the engine, pulling it when the settings allow. */
final class ImagePuller {
  private static final System.Logger LOG = System.getLogger("paddock.backend.docker");

  private final DockerEngine engine;
  private final boolean pullMissing;

  ImagePuller(DockerEngine engine, boolean pullMissing) {
    this.engine = engine;
    this.pullMissing = pullMissing;
  }

  /**
   * @throws dev.paddock.api.spi.RuntimeStartException IMAGE_MISSING when it is not there after all
   */
  void ensure(String image) {
    Response found = engine.get("/images/" + image + "/json");
    if (found.ok()) {
      return;
    }
    if (found.status() != 404) {
      throw DockerBackend.failure(
          Kind.UNKNOWN, "image inspect of " + image + ": " + found.message());
    }
    if (pullMissing) {
      pull(image);
      if (engine.get("/images/" + image + "/json").ok()) {
        return;
      }
    }
    throw DockerBackend.failure(
        Kind.IMAGE_MISSING, "image " + image + " is not present on the engine");
  }

  private void pull(String image) {
    LOG.log(System.Logger.Level.INFO, "docker backend: pulling {0}", image);
    try {
      // Pulls take as long as the image is big: minutes, not the usual call limit.
      Response response =
          engine.call(
              "POST", "/images/create?" + query(image), new byte[0], null, Duration.ofMinutes(30));
      if (!response.ok()) {
        LOG.log(System.Logger.Level.WARNING, "pull of {0} failed: {1}", image, response.message());
      }
    } catch (EngineException e) {
      throw e;
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING, "pull of {0} failed: {1}", image, e.toString());
    }
  }

  static String query(String image) {
    int at = image.lastIndexOf('@');
    int colon = image.lastIndexOf(':');
    if (at >= 0) {
      return "fromImage=" + enc(image);
    }
    if (colon > image.lastIndexOf('/')) {
      return "fromImage="
          + enc(image.substring(0, colon))
          + "&tag="
          + enc(image.substring(colon + 1));
    }
    // Without a tag the engine would pull every tag of the repository.
    return "fromImage=" + enc(image) + "&tag=latest";
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}
