package dev.paddock.archive.s3;

import dev.paddock.api.settings.Setting;
import dev.paddock.api.settings.Settings;
import java.net.URI;
import java.util.List;
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

  static final Setting<String> BUCKET =
      Setting.string(PREFIX + "BUCKET", "the S3 bucket (required with the s3 store)");
  static final Setting<URI> ENDPOINT =
      Setting.of(
          PREFIX + "ENDPOINT",
          "the S3 API's URL for an S3-compatible server (MinIO, Ceph...); unset for AWS",
          "a URL such as http://minio:9000",
          S3ArchiveConfig::endpoint);
  static final Setting<String> REGION =
      Setting.string(PREFIX + "REGION", "the signing region")
          .withDefaultText("AWS_REGION, else us-east-1");
  static final Setting<Boolean> PATH_STYLE =
      Setting.bool(PREFIX + "PATH_STYLE", "path-style URLs (most S3-compatible servers need it)")
          .withDefault(false);
  static final Setting<String> ACCESS_KEY_ID =
      Setting.string(PREFIX + "ACCESS_KEY_ID", "a static key id (with the secret key)")
          .withDefaultText("the AWS SDK's default chain");
  static final Setting<String> SECRET_ACCESS_KEY =
      Setting.string(PREFIX + "SECRET_ACCESS_KEY", "a static secret key (with the key id)")
          .secret();
  static final Setting<Integer> PART_SIZE_MB =
      Setting.integer(
              PREFIX + "PART_SIZE_MB", "multipart upload part size in MiB", 5, Integer.MAX_VALUE)
          .withDefault((int) (DEFAULT_PART_BYTES >> 20));

  /** Every setting of the S3 store. */
  static final List<Setting<?>> SETTINGS =
      List.of(BUCKET, ENDPOINT, REGION, PATH_STYLE, ACCESS_KEY_ID, SECRET_ACCESS_KEY, PART_SIZE_MB);

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
    Settings s = Settings.of(SETTINGS, settings);
    String bucket =
        s.find(BUCKET)
            .orElseThrow(
                () ->
                    new IllegalArgumentException(
                        BUCKET.name() + " is required when RUNTIME_FILE_ARCHIVE_STORE=s3"));
    String region =
        s.find(REGION)
            .or(() -> Optional.ofNullable(settings.get("AWS_REGION")).filter(r -> !r.isBlank()))
            .map(String::trim)
            .orElse("us-east-1");
    Optional<Credentials> credentials = credentials(s);
    return new S3ArchiveConfig(
        bucket,
        s.find(ENDPOINT),
        region,
        s.get(PATH_STYLE),
        credentials,
        (long) s.get(PART_SIZE_MB) << 20);
  }

  private static Optional<Credentials> credentials(Settings s) {
    Optional<String> id = s.find(ACCESS_KEY_ID);
    Optional<String> secret = s.find(SECRET_ACCESS_KEY);
    if (id.isPresent() != secret.isPresent()) {
      throw new IllegalArgumentException(
          "set both " + ACCESS_KEY_ID.name() + " and " + SECRET_ACCESS_KEY.name() + ", or neither");
    }
    return id.map(i -> new Credentials(i, secret.orElseThrow()));
  }

  private static URI endpoint(String value) {
    URI uri;
    try {
      uri = URI.create(value.trim());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("a URL such as http://minio:9000");
    }
    if (uri.getScheme() == null || uri.getHost() == null) {
      throw new IllegalArgumentException("a URL such as http://minio:9000");
    }
    return uri;
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
