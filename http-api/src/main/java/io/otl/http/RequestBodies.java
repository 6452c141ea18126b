package io.otl.http;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.entity;
import static org.apache.pekko.http.javadsl.server.Directives.extractRequest;
import static org.apache.pekko.http.javadsl.server.Directives.extractRequestEntity;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Iterator;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.unmarshalling.Unmarshaller;
import org.apache.pekko.util.ByteString;

/** How every route reads a request body, so sessions, models and training refuse a bad one alike. */
final class RequestBodies {
  private RequestBodies() {}

  /**
   * The raw body; parsed by us so malformed JSON and invalid UTF-8 become a 400 naming the problem.
   * A non-empty body must say it is JSON: text/plain or a form is refused with 415, not guessed at.
   * So is a compressed one ({@code Content-Encoding: gzip}): these bodies are small and are read as
   * sent, and a gzip body read as JSON would be a 400 about a control character, which misleads.
   */
  static Route body(Function<ByteString, Route> inner) {
    return uncompressed("JSON body", () -> jsonBody(inner));
  }

  /**
   * {@code inner}, unless the body is compressed: then a 415 naming the encoding. A compressed body
   * is refused by name, not parsed as sent (JSON reported a control character; a form body read
   * gzip as a malformed form, and a {@code br} one as plain fields, recording a rating from bytes
   * the client said were compressed) nor inflated past the body limit: the API's bodies are small.
   */
  static Route uncompressed(String what, java.util.function.Supplier<Route> inner) {
    return extractRequest(request -> {
      String encoding = ContentEncoding.of(request);
      if (!encoding.isEmpty() && !encoding.equals("identity")) {
        return complete(Json.error(StatusCodes.UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type",
            "Content-Encoding " + io.otl.wire.JsonLimits.shownKey(encoding)
                + " is not accepted here: send the " + what + " uncompressed (only /v1/traces takes gzip)"));
      }
      return inner.get();
    });
  }

  private static Route jsonBody(Function<ByteString, Route> inner) {
    return extractRequestEntity(e -> {
      var type = e.getContentType().mediaType();
      boolean json = type.isApplication() && (type.subType().equals("json") || type.subType().endsWith("+json"));
      if (!json && !e.isKnownEmpty()) {
        return complete(Json.error(StatusCodes.UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type",
            "the body must be sent as JSON, with Content-Type: application/json"));
      }
      return entity(Unmarshaller.entityToByteString(), inner);
    });
  }

  /** A strict JSON object (StrictJson) nested at most the default depth. */
  static JsonNode readJson(ByteString bytes) {
    return StrictJson.readObject(bytes, StrictJson.DEFAULT_MAX_DEPTH);
  }

  /**
   * Refuses a body with fields on a request that takes none: what it asks for (an algorithm for a
   * trigger, a reason for a promote) would otherwise be dropped without a word. Empty and {@code {}} pass.
   */
  static void noBody(ByteString bytes, String why) {
    if (bytes.isEmpty()) return;
    if (readJson(bytes).size() > 0) throw BadRequest.invalid(why);
  }

  static void onlyFields(JsonNode body, Set<String> allowed) {
    Iterator<String> names = body.fieldNames();
    while (names.hasNext()) {
      String n = names.next();
      if (!allowed.contains(n)) {
        // sorted: Set.of iterates in another order on every JVM, and the message should not
        throw BadRequest.invalid(io.otl.wire.JsonLimits.shownKey(n) + " is not a field of this request; allowed: "
            + new TreeSet<>(allowed));
      }
    }
  }
}
