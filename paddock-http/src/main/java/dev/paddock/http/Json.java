package dev.paddock.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.jr.ob.JSON;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Map;

/** The agent-server's one JSON binder: jackson-jr over plain maps, lists and scalars. */
public final class Json {
  private static final JsonFactory FACTORY =
      JsonFactory.builder()
          .streamReadConstraints(
              StreamReadConstraints.builder().maxNestingDepth(64).maxStringLength(16 << 20).build())
          .build();
  // Nulls are written: the OpenHands shapes carry explicit nulls (exit_code, cwd, next_page_id).
  private static final JSON JSON_STD =
      JSON.builder(FACTORY).enable(JSON.Feature.WRITE_NULL_PROPERTIES).build();

  private Json() {}

  /** Parses a JSON object; anything else (array, scalar, malformed text) is a 400 that says why. */
  public static Map<String, Object> parseObject(byte[] body) {
    Object value;
    try {
      value = JSON_STD.anyFrom(body);
    } catch (JsonProcessingException e) {
      throw HttpError.badRequest("malformed JSON: " + e.getOriginalMessage());
    } catch (IOException e) {
      throw HttpError.badRequest("unreadable JSON body: " + e.getMessage());
    }
    if (!(value instanceof Map<?, ?> map)) {
      throw HttpError.unprocessable("request body must be a JSON object");
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> object = (Map<String, Object>) map;
    return object;
  }

  /** Parses any JSON value (object, array or scalar); malformed text is a 400. */
  public static Object parseAny(byte[] body) {
    try {
      return JSON_STD.anyFrom(body);
    } catch (IOException e) {
      throw HttpError.badRequest("malformed JSON: " + e.getMessage());
    }
  }

  public static byte[] bytes(Object value) {
    try {
      return JSON_STD.asBytes(value);
    } catch (IOException e) {
      throw new IllegalStateException("cannot serialise " + value.getClass(), e);
    }
  }

  public static String string(Object value) {
    try {
      return JSON_STD.asString(value);
    } catch (IOException e) {
      throw new IllegalStateException("cannot serialise " + value.getClass(), e);
    }
  }

  /** A streaming generator for large documents (command output read from a spool file). */
  public static JsonGenerator generator(OutputStream out) throws IOException {
    return FACTORY.createGenerator(out);
  }

  /** Writes one simple value (map, list, scalar) through a generator already in use. */
  public static void write(JsonGenerator generator, Object value) throws IOException {
    JSON_STD.write(value, generator);
  }
}
