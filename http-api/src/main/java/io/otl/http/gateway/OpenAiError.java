package io.otl.http.gateway;

import io.otl.http.Json;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RetryAfter;

/**
 * An error in OpenAI's shape, {@code {"error":{"message","type","param","code"}}}, which OpenAI
 * clients turn into their typed exceptions (BadRequest, Authentication, NotFound, RateLimit …).
 */
public final class OpenAiError extends RuntimeException {
  private final int status;
  private final String type;
  private final String param;
  private final String code;

  public OpenAiError(int status, String type, String param, String code, String message) {
    super(message, null, false, false);
    this.status = status;
    this.type = type;
    this.param = param;
    this.code = code;
  }

  public static OpenAiError invalid(String param, String message) {
    return new OpenAiError(400, "invalid_request_error", param, "invalid_value", message);
  }

  public int status() {
    return status;
  }

  /** OpenAI's {@code code} of the error ({@code missing_agent}, {@code invalid_api_key} …). */
  public String code() {
    return code;
  }

  public HttpResponse response() {
    HttpResponse r = Json.response(StatusCodes.get(status), body());
    if (status == 408) return r.addHeader(org.apache.pekko.http.javadsl.model.headers.Connection.create("close"));
    return status == 429 || status == 503 ? r.addHeader(RetryAfter.create(1L)) : r;
  }

  /**
   * The error as the last event of a stream already answered 200 ({@code data: {"error":…}} and a
   * blank line), as OpenAI's servers end a stream that fails; no {@code [DONE]} follows.
   */
  public String sseEvent() {
    try {
      return "data: " + Json.MAPPER.writeValueAsString(body()) + "\n\n";
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  private Map<String, Object> body() {
    Map<String, Object> error = new LinkedHashMap<>();
    error.put("message", getMessage());
    error.put("type", type);
    error.put("param", param);
    error.put("code", code);
    return Map.of("error", error);
  }
}
