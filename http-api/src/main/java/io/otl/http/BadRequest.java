package io.otl.http;

/** A client error found at the edge; becomes a 4xx with the field named. Changes nothing. */
public final class BadRequest extends RuntimeException {
  private final int status;
  private final String code;

  public BadRequest(int status, String code, String message) {
    super(message, null, false, false);
    this.status = status;
    this.code = code;
  }

  public static BadRequest invalid(String message) {
    return new BadRequest(400, "invalid_request", message);
  }

  public int status() {
    return status;
  }

  public String code() {
    return code;
  }
}
