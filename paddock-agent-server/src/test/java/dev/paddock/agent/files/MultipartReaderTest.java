package dev.paddock.agent.files;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.paddock.http.HttpError;
import java.io.ByteArrayInputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

class MultipartReaderTest {
  private static final String B = "XyZ-boundary";

  /** Hands out one byte per read, so every boundary is split across reads. */
  private static InputStream trickle(byte[] bytes) {
    return new FilterInputStream(new ByteArrayInputStream(bytes)) {
      @Override
      public int read(byte[] b, int off, int len) throws IOException {
        return super.read(b, off, Math.min(len, 1));
      }
    };
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private record Read(String name, Optional<String> filename, byte[] content) {}

  private static List<Read> readAll(InputStream in) throws IOException {
    MultipartReader reader = new MultipartReader(in, B);
    List<Read> parts = new ArrayList<>();
    for (var part = reader.next(); part.isPresent(); part = reader.next()) {
      parts.add(
          new Read(part.get().name(), part.get().filename(), part.get().body().readAllBytes()));
    }
    return parts;
  }

  @Test
  void readsPartsSplitIntoSingleBytesWithNearMissBoundariesInTheContent() throws Exception {
    String body =
        "preamble to ignore\r\n--"
            + B
            + "  \r\nContent-Disposition: form-data; name=\"note\"\r\n\r\n"
            + "line\r\n--XyZ-bound not a boundary\r\n-"
            + "\r\n--"
            + B
            + "\r\ncontent-disposition: form-data; name=\"file\"; filename=\"a \\\"b\\\".txt\"\r\n"
            + "Content-Type: text/plain\r\n\r\n"
            + "\r\n\r\n--"
            + B
            + "--\r\nepilogue";

    List<Read> parts = readAll(trickle(bytes(body)));

    assertThat(parts).hasSize(2);
    assertThat(parts.get(0).name()).isEqualTo("note");
    assertThat(parts.get(0).filename()).isEmpty();
    assertThat(new String(parts.get(0).content(), StandardCharsets.UTF_8))
        .isEqualTo("line\r\n--XyZ-bound not a boundary\r\n-");
    assertThat(parts.get(1).name()).isEqualTo("file");
    assertThat(parts.get(1).filename()).hasValue("a \"b\".txt");
    assertThat(parts.get(1).content()).containsExactly('\r', '\n');
  }

  @Test
  void streamsContentLargerThanItsBuffer() throws Exception {
    byte[] content = new byte[1 << 20];
    new Random(1).nextBytes(content);
    byte[] head = bytes("--" + B + "\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n");
    byte[] tail = bytes("\r\n--" + B + "--");
    byte[] body = new byte[head.length + content.length + tail.length];
    System.arraycopy(head, 0, body, 0, head.length);
    System.arraycopy(content, 0, body, head.length, content.length);
    System.arraycopy(tail, 0, body, head.length + content.length, tail.length);

    List<Read> parts = readAll(new ByteArrayInputStream(body));

    assertThat(parts).hasSize(1);
    assertThat(parts.get(0).content()).isEqualTo(content);
  }

  @Test
  void skipsUnreadPartsWhenMovingOn() throws Exception {
    String body =
        "--"
            + B
            + "\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nunread\r\n--"
            + B
            + "\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\nread\r\n--"
            + B
            + "--";
    MultipartReader reader = new MultipartReader(trickle(bytes(body)), B);

    assertThat(reader.next()).get().extracting(MultipartReader.Part::name).isEqualTo("a");
    var second = reader.next().orElseThrow();
    assertThat(second.name()).isEqualTo("b");
    assertThat(second.body().readAllBytes()).isEqualTo(bytes("read"));
    assertThat(reader.next()).isEmpty();
  }

  @Test
  void malformedBodiesAreBadRequests() {
    String part = "--" + B + "\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\ndata";
    assertBadRequest("", "ended before the closing boundary");
    assertBadRequest(part, "ended before the closing boundary");
    assertBadRequest(
        "--" + B + "\r\nContent-Type: x\r\n\r\nx\r\n--" + B + "--", "no Content-Disposition name");
    assertBadRequest("--" + B + "\r\nno colon here\r\n\r\n", "no ':'");
    assertBadRequest("--" + B + "junk\r\n", "not followed by CRLF");
    assertBadRequest("--" + B + "\r\nX: " + "y".repeat(20_000) + "\r\n\r\n", "exceed");
  }

  private static void assertBadRequest(String body, String why) {
    assertThatThrownBy(() -> readAll(new ByteArrayInputStream(bytes(body))))
        .isInstanceOfSatisfying(HttpError.class, e -> assertThat(e.status()).isEqualTo(400))
        .hasMessageContaining(why);
  }

  @Test
  void boundaryComesFromTheContentType() {
    assertThat(MultipartReader.boundaryOf(Optional.of("multipart/form-data; boundary=abc")))
        .isEqualTo("abc");
    assertThat(
            MultipartReader.boundaryOf(
                Optional.of("Multipart/Form-Data; charset=utf-8; Boundary=\"a;b c\"")))
        .isEqualTo("a;b c");
    assertThatThrownBy(() -> MultipartReader.boundaryOf(Optional.of("multipart/form-data")))
        .isInstanceOfSatisfying(HttpError.class, e -> assertThat(e.status()).isEqualTo(400));
    assertThatThrownBy(() -> MultipartReader.boundaryOf(Optional.of("application/json")))
        .isInstanceOfSatisfying(HttpError.class, e -> assertThat(e.status()).isEqualTo(422));
    assertThatThrownBy(() -> MultipartReader.boundaryOf(Optional.empty()))
        .isInstanceOfSatisfying(HttpError.class, e -> assertThat(e.status()).isEqualTo(422));
  }
}
