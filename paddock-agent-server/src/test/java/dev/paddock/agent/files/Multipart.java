package dev.paddock.agent.files;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublisher;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.List;
import java.util.function.Supplier;

/** Builds streamed multipart/form-data request bodies for the upload tests. */
final class Multipart {
  static final String BOUNDARY = "paddock-test-7MA4YWxkTrZu0gW";
  static final String CONTENT_TYPE = "multipart/form-data; boundary=" + BOUNDARY;

  private Multipart() {}

  /** The head of a part, from its boundary to the blank line before its content. */
  static byte[] partHead(String field, String filename) {
    return ("--"
            + BOUNDARY
            + "\r\nContent-Disposition: form-data; name=\""
            + field
            + "\"; filename=\""
            + filename
            + "\"\r\nContent-Type: application/octet-stream\r\n\r\n")
        .getBytes(StandardCharsets.UTF_8);
  }

  static byte[] closing() {
    return ("\r\n--" + BOUNDARY + "--\r\n").getBytes(StandardCharsets.UTF_8);
  }

  /** One {@code file} part; sent chunked, without Content-Length. */
  static BodyPublisher chunked(Supplier<InputStream> content) {
    return HttpRequest.BodyPublishers.ofInputStream(() -> stream(content.get()));
  }

  /** One {@code file} part of {@code length} bytes, sent with a Content-Length. */
  static BodyPublisher sized(Supplier<InputStream> content, long length) {
    long total = partHead("file", "data.bin").length + length + closing().length;
    return HttpRequest.BodyPublishers.fromPublisher(chunked(content), total);
  }

  static BodyPublisher of(byte[] content) {
    return sized(() -> new ByteArrayInputStream(content), content.length);
  }

  private static InputStream stream(InputStream content) {
    return new SequenceInputStream(
        Collections.enumeration(
            List.of(
                new ByteArrayInputStream(partHead("file", "data.bin")),
                content,
                new ByteArrayInputStream(closing()))));
  }
}
