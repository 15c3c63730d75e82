package dev.paddock.archive.s3;

import java.net.URI;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Where and how the S3 archive store connects. Immutable; {@link #toString} never shows the secret.
 *
 * @param bucket the bucket (must exist; the store does not create it)
 * @param endpoint the S3 API's base URL for an S3-compatible server (MinIO, Ceph, s3proxy...);
 *     empty for AWS itself
 * @param region the signing region (default {@code us-east-1})
 * @param pathStyle {@code http://host/bucket/key} instead of {@code http://bucket.host/key}; most
 *     S3-compatible servers need it
 * @param credentials a static key pair; empty to use the AWS SDK's default chain ({@code
 *     AWS_ACCESS_KEY_ID}/{@code AWS_SECRET_ACCESS_KEY}, profiles, container and instance roles)
 * @param partBytes objects larger than this are uploaded in parts of this size (multipart upload);
 *     S3 needs at least 5 MiB (default 16 MiB)
 */
public record S3ArchiveConfig(
    String bucket,
    Optional<URI> endpoint,
    String region,
    boolean pathStyle,
    Optional<Credentials> credentials,
    long partBytes) {
  /** S3's smallest part (all but the last); also the default part size's floor. */
  public static final long MIN_PART_BYTES = 5L * 1024 * 1024;

  public static final long DEFAULT_PART_BYTES = 16L * 1024 * 1024;
  static final String PREFIX = "RUNTIME_FILE_ARCHIVE_S3_";

  public S3ArchiveConfig {
    Objects.requireNonNull(bucket, "bucket");
    if (bucket.isBlank()) {
      throw new IllegalArgumentException("the S3 bucket must not be blank");
    }
    Objects.requireNonNull(endpoint, "endpoint");
    Objects.requireNonNull(region, "region");
    Objects.requireNonNull(credentials, "credentials");
    if (partBytes < MIN_PART_BYTES) {
      throw new IllegalArgumentException(
          "the S3 part size must be at least " + MIN_PART_BYTES + " bytes, got " + partBytes);
    }
  }

  /** A bucket on AWS in {@code us-east-1}, default credentials chain, 16 MiB parts. */
  public static S3ArchiveConfig of(String bucket) {
    return new S3ArchiveConfig(
        bucket, Optional.empty(), "us-east-1", false, Optional.empty(), DEFAULT_PART_BYTES);
  }

  public S3ArchiveConfig withEndpoint(URI endpoint, boolean pathStyle) {
    return new S3ArchiveConfig(
        bucket, Optional.of(endpoint), region, pathStyle, credentials, partBytes);
  }

  public S3ArchiveConfig withRegion(String region) {
    return new S3ArchiveConfig(bucket, endpoint, region, pathStyle, credentials, partBytes);
  }

  public S3ArchiveConfig withCredentials(Credentials credentials) {
    return new S3ArchiveConfig(
        bucket, endpoint, region, pathStyle, Optional.of(credentials), partBytes);
  }

  public S3ArchiveConfig withPartBytes(long partBytes) {
    return new S3ArchiveConfig(bucket, endpoint, region, pathStyle, credentials, partBytes);
  }

  /**
   * Reads {@code RUNTIME_FILE_ARCHIVE_S3_BUCKET} (required), {@code _ENDPOINT}, {@code _REGION}
   * (else {@code AWS_REGION}, else {@code us-east-1}), {@code _PATH_STYLE}, {@code _ACCESS_KEY_ID}
   * with {@code _SECRET_ACCESS_KEY} (both or neither; neither: the SDK's default chain) and {@code
   * _PART_SIZE_MB}.
   *
   * @throws IllegalArgumentException naming the setting that is missing or malformed (never its
   *     value when it is a secret)
   */
  public static S3ArchiveConfig fromSettings(Map<String, String> settings) {
    String bucket =
        setting(settings, "BUCKET")
            .orElseThrow(
                () ->
                    new IllegalArgumentException(
                        PREFIX + "BUCKET is required when RUNTIME_FILE_ARCHIVE_STORE=s3"));
    S3ArchiveConfig config = of(bucket);
    Optional<String> region =
        setting(settings, "REGION").or(() -> Optional.ofNullable(settings.get("AWS_REGION")));
    if (region.isPresent() && !region.get().isBlank()) {
      config = config.withRegion(region.get().trim());
    }
    Optional<String> endpoint = setting(settings, "ENDPOINT");
    boolean pathStyle = setting(settings, "PATH_STYLE").map(Boolean::parseBoolean).orElse(false);
    if (endpoint.isPresent()) {
      config = config.withEndpoint(endpoint(endpoint.get()), pathStyle);
    } else if (pathStyle) {
      config =
          new S3ArchiveConfig(
              bucket,
              Optional.empty(),
              config.region(),
              true,
              config.credentials(),
              config.partBytes());
    }
    Optional<String> id = setting(settings, "ACCESS_KEY_ID");
    Optional<String> secret = setting(settings, "SECRET_ACCESS_KEY");
    if (id.isPresent() != secret.isPresent()) {
      throw new IllegalArgumentException(
          "set both " + PREFIX + "ACCESS_KEY_ID and " + PREFIX + "SECRET_ACCESS_KEY, or neither");
    }
    if (id.isPresent()) {
      config = config.withCredentials(new Credentials(id.get(), secret.get()));
    }
    Optional<String> partMb = setting(settings, "PART_SIZE_MB");
    if (partMb.isPresent()) {
      config = config.withPartBytes(partMegabytes(partMb.get()) * 1024 * 1024);
    }
    return config;
  }

  private static Optional<String> setting(Map<String, String> settings, String name) {
    return Optional.ofNullable(settings.get(PREFIX + name))
        .map(String::trim)
        .filter(v -> !v.isEmpty());
  }

  private static URI endpoint(String value) {
    try {
      URI uri = URI.create(value);
      if (uri.getScheme() == null || uri.getHost() == null) {
        throw new IllegalArgumentException("no scheme or host");
      }
      return uri;
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          PREFIX + "ENDPOINT must be a URL such as http://minio:9000, got '" + value + "'", e);
    }
  }

  private static long partMegabytes(String value) {
    try {
      return Long.parseLong(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          PREFIX + "PART_SIZE_MB must be a whole number of MiB (at least 5), got '" + value + "'",
          e);
    }
  }

  /**
   * A static S3 key pair. {@link #toString} shows the key id only.
   *
   * @param accessKeyId the access key id
   * @param secretAccessKey the secret; never logged
   */
  public record Credentials(String accessKeyId, String secretAccessKey) {
    public Credentials {
      Objects.requireNonNull(accessKeyId, "accessKeyId");
      Objects.requireNonNull(secretAccessKey, "secretAccessKey");
    }

    @Override
    public String toString() {
      return "Credentials[accessKeyId=" + accessKeyId + ", secretAccessKey=(hidden)]";
    }
  }
}
