package io.otl.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * Route labels of /metrics and the client-error log keep the route's literals: exports and the
 * audit timeline were labelled {@code /v1/{id}/{id}} and {@code /v1/audit/session/{id}/{id}}, which
 * a new user reading "client errors: 400 POST /v1/{id}/{id}" could not place.
 */
class ApiRoutesLabelTest {
  @Test
  void exportsAndTimelineKeepTheirLiteralsAndIdsStayHidden() {
    assertEquals("/v1/exports/{id}", ApiRoutes.label("/v1/exports/support-bot"));
    assertEquals("/v1/audit/session/{id}/timeline", ApiRoutes.label("/v1/audit/session/jane@example.com/timeline"));
    assertEquals("/v1/sessions/{id}/events", ApiRoutes.label("/v1/sessions/13812345678/events"));
    assertEquals("/v1/{id}", ApiRoutes.label("/v1/jane@example.com"));
  }

  @Test
  void aDoubledOrTrailingSlashIsTheSameRoute() {
    assertEquals("/v1/chat/completions", ApiRoutes.canonical("/v1//chat/completions/"));
    assertEquals("/v1/chat/completions", ApiRoutes.canonical("/v1//chat/completions"));
    assertEquals("/v1/chat/completions", ApiRoutes.canonical("/v1/chat/completions/"));
    assertEquals("/v1/chat/completions", ApiRoutes.canonical("/v1/chat/completions"));
    assertEquals("/metrics", ApiRoutes.canonical("/metrics/"));
    assertEquals("/", ApiRoutes.canonical("/"));
    // An OTLP endpoint (or base URL) ending in / joined with "/v1/traces" as strings.
    assertEquals("/v1/traces", ApiRoutes.canonical("//v1/traces"));
    assertEquals("/v1/traces", ApiRoutes.canonical("//v1/traces/"));
    assertEquals("//v2/x", ApiRoutes.canonical("//v2/x"));
    // Two trailing slashes are a typo and stay one: the route answers 404.
    assertEquals("/v1/sessions/x/events/", ApiRoutes.canonical("/v1/sessions/x/events//"));
  }
}
