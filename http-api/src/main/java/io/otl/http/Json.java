package io.otl.http;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.datatype.jdk8.Jdk8Module;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import com.fasterxml.jackson.module.paramnames.ParameterNamesModule;
import io.otl.core.entity.Rejection;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCode;
import org.apache.pekko.http.javadsl.model.StatusCodes;

/** The one configured ObjectMapper of the HTTP edge, and JSON responses built with it. */
public final class Json {
  public static final ObjectMapper MAPPER = new ObjectMapper()
      .registerModule(new JavaTimeModule())
      .registerModule(new Jdk8Module())
      .registerModule(new ParameterNamesModule())
      .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
      .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
      .setSerializationInclusion(JsonInclude.Include.ALWAYS);

  private Json() {}

  public static HttpResponse response(StatusCode status, Object body) {
    try {
      return HttpResponse.create().withStatus(status)
          .withEntity(ContentTypes.APPLICATION_JSON, MAPPER.writeValueAsBytes(body));
    } catch (Exception e) {
      throw new IllegalStateException("response body not serializable: " + e.getMessage(), e);
    }
  }

  public static HttpResponse ok(Object body) {
    return response(StatusCodes.OK, body);
  }

  /** design §7.1 error body: {@code {"error":"<code>","message":"<what to fix>"}}. */
  public static HttpResponse error(StatusCode status, String code, String message) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("error", code);
    body.put("message", message);
    return response(status, body);
  }

  /**
   * The answer to a command an entity refused (any of the three): 400 {@code invalid_request},
   * 404 {@code not_found}, 409 {@code conflict} or {@code invalid_transition}.
   */
  public static HttpResponse rejected(Rejection r) {
    return switch (r.rejectionKind()) {
      case INVALID_INPUT -> error(StatusCodes.BAD_REQUEST, "invalid_request", r.message());
      case NOT_FOUND -> error(StatusCodes.NOT_FOUND, "not_found", r.message());
      case CONFLICT -> error(StatusCodes.CONFLICT, "conflict", r.message());
      case INVALID_TRANSITION -> error(StatusCodes.CONFLICT, "invalid_transition", r.message());
    };
  }
}
