package dev.paddock.archive.s3;

import dev.paddock.api.ArchiveStore;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;
import software.amazon.awssdk.services.s3.model.AbortMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.CompletedMultipartUpload;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.HeadObjectRequest;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;
import software.amazon.awssdk.services.s3.model.UploadPartRequest;

/**
 * {@link ArchiveStore} over an S3 bucket; see {@link S3ArchiveStores#create}. Thread-safe (the SDK
 * client is). SDK failures become {@link IOException}s whose message names the operation and key;
 * the SDK never puts credentials in its messages.
 */
final class S3ArchiveStore implements ArchiveStore {
  private static final String OCTETS = "application/octet-stream";

  private final S3Client s3;
  private final S3ArchiveConfig config;

  private S3ArchiveStore(S3Client s3, S3ArchiveConfig config) {
    this.s3 = s3;
    this.config = config;
  }

  static S3ArchiveStore open(S3ArchiveConfig config) {
    S3ClientBuilder builder =
        S3Client.builder()
            .httpClientBuilder(
                UrlConnectionHttpClient.builder()
                    .connectionTimeout(Duration.ofSeconds(10))
                    .socketTimeout(Duration.ofMinutes(2)))
            .region(Region.of(config.region()))
            .forcePathStyle(config.pathStyle())
            .credentialsProvider(credentials(config))
            // Since SDK 2.30 uploads carry CRC trailers by default (aws-chunked encoding), which
            // many S3-compatible servers reject; checksums only where S3 requires them.
            .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
            .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED);
    config.endpoint().ifPresent(builder::endpointOverride);
    return new S3ArchiveStore(builder.build(), config);
  }

  private static AwsCredentialsProvider credentials(S3ArchiveConfig config) {
    return config
        .credentials()
        .<AwsCredentialsProvider>map(
            c ->
                StaticCredentialsProvider.create(
                    AwsBasicCredentials.create(c.accessKeyId(), c.secretAccessKey())))
        .orElseGet(() -> DefaultCredentialsProvider.builder().build());
  }

  @Override
  public void put(String key, Path file) throws IOException {
    ArchiveStore.requireValidKey(key);
    long size = Files.size(file);
    try {
      if (size <= config.partBytes()) {
        s3.putObject(
            PutObjectRequest.builder()
                .bucket(config.bucket())
                .key(key)
                .contentLength(size)
                .contentType(OCTETS)
                .build(),
            RequestBody.fromFile(file));
      } else {
        putInParts(key, file, size);
      }
    } catch (SdkException e) {
      throw failure("storing", key, e);
    }
  }

  // Parts are read from the file one at a time: memory holds a copy buffer, never a part.
  private void putInParts(String key, Path file, long size) throws IOException {
    String uploadId =
        s3.createMultipartUpload(
                CreateMultipartUploadRequest.builder()
                    .bucket(config.bucket())
                    .key(key)
                    .contentType(OCTETS)
                    .build())
            .uploadId();
    try {
      List<CompletedPart> parts = new ArrayList<>();
      for (long offset = 0; offset < size; offset += config.partBytes()) {
        long length = Math.min(config.partBytes(), size - offset);
        parts.add(uploadPart(key, uploadId, parts.size() + 1, file, offset, length));
      }
      s3.completeMultipartUpload(
          CompleteMultipartUploadRequest.builder()
              .bucket(config.bucket())
              .key(key)
              .uploadId(uploadId)
              .multipartUpload(CompletedMultipartUpload.builder().parts(parts).build())
              .build());
    } catch (IOException | RuntimeException e) {
      abort(key, uploadId, e);
      throw e;
    }
  }

  private CompletedPart uploadPart(
      String key, String uploadId, int number, Path file, long offset, long length)
      throws IOException {
    try (FileSlice slice = new FileSlice(file, offset, length)) {
      String etag =
          s3.uploadPart(
                  UploadPartRequest.builder()
                      .bucket(config.bucket())
                      .key(key)
                      .uploadId(uploadId)
                      .partNumber(number)
                      .contentLength(length)
                      .build(),
                  RequestBody.fromContentProvider(slice, length, OCTETS))
              .eTag();
      return CompletedPart.builder().partNumber(number).eTag(etag).build();
    }
  }

  // An abandoned upload keeps its parts (and costs) until aborted; the first failure wins.
  private void abort(String key, String uploadId, Exception cause) {
    try {
      s3.abortMultipartUpload(
          AbortMultipartUploadRequest.builder()
              .bucket(config.bucket())
              .key(key)
              .uploadId(uploadId)
              .build());
    } catch (SdkException e) {
      cause.addSuppressed(e);
    }
  }

  @Override
  public List<String> list(String prefix) throws IOException {
    try {
      return s3
          .listObjectsV2Paginator(
              ListObjectsV2Request.builder().bucket(config.bucket()).prefix(prefix).build())
          .contents()
          .stream()
          .map(S3Object::key)
          .sorted()
          .toList();
    } catch (SdkException e) {
      throw failure("listing", prefix, e);
    }
  }

  @Override
  public Optional<InputStream> open(String key) throws IOException {
    ArchiveStore.requireValidKey(key);
    try {
      return Optional.of(
          s3.getObject(GetObjectRequest.builder().bucket(config.bucket()).key(key).build()));
    } catch (NoSuchKeyException e) {
      return Optional.empty();
    } catch (SdkException e) {
      throw failure("reading", key, e);
    }
  }

  @Override
  public Optional<Long> size(String key) throws IOException {
    ArchiveStore.requireValidKey(key);
    try {
      return Optional.of(
          s3.headObject(HeadObjectRequest.builder().bucket(config.bucket()).key(key).build())
              .contentLength());
    } catch (NoSuchKeyException e) {
      return Optional.empty();
    } catch (S3Exception e) {
      if (e.statusCode() == 404) {
        return Optional.empty();
      }
      throw failure("sizing", key, e);
    } catch (SdkException e) {
      throw failure("sizing", key, e);
    }
  }

  private IOException failure(String what, String key, SdkException e) {
    return new IOException(
        what + " s3://" + config.bucket() + "/" + key + " failed: " + e.getMessage(), e);
  }

  @Override
  public void close() {
    s3.close();
  }
}
