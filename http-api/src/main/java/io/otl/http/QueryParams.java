package io.otl.http;

import java.util.Optional;

/**
 * Optional query parameters: one sent empty ({@code ?agentId=&status=}, as design §7.1 writes the
 * filters and as clients send an unset filter) means the same as one not sent. A value that is
 * present is validated by the route as before.
 */
final class QueryParams {
  private QueryParams() {}

  static Optional<String> given(Optional<String> value) {
    return value.filter(v -> !v.isBlank());
  }
}
