package io.otl.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A route's query parameters: only the ones it takes, each once; a client's text is not echoed. */
class QueryParamsTest {
  private static final List<String> JOBS = List.of("agentId", "status");

  @Test
  void theParametersARouteTakesPassEachOnce() {
    assertNull(QueryParams.problem(Map.of(), JOBS));
    assertNull(QueryParams.problem(Map.of("agentId", List.of("a1"), "status", List.of("")), JOBS));
  }

  @Test
  void aMisspeltFilterIsNamedWithTheOnesTheRouteTakes() {
    String problem = QueryParams.problem(Map.of("agent", List.of("a1")), JOBS);
    assertEquals("the query parameter agent is not one this route takes; it takes agentId, status", problem);
  }

  /**
   * An empty pair ({@code ?agentId=a1&}, {@code ?&}: a query built by joining strings) names no parameter,
   * as the URL standard reads it; it was refused as "a query parameter is not one this route takes", on every
   * route once the query rule covered them all. A value without a name ({@code ?=1}) is still refused.
   */
  @Test
  void anEmptyPairIsNoParameter() {
    assertNull(QueryParams.problem(Map.of("agentId", List.of("a1"), "", List.of("")), JOBS));
    assertNull(QueryParams.problem(Map.of("", List.of("", "")), List.of()));
    assertEquals("a query parameter is not one this route takes; it takes agentId, status",
        QueryParams.problem(Map.of("", List.of("1")), JOBS));
  }

  @Test
  void aParameterSentTwiceIsRefused() {
    assertEquals("the query parameter agentId is sent 2 times; send it once",
        QueryParams.problem(Map.of("agentId", List.of("a1", "a2")), JOBS));
  }

  @Test
  void anUnknownNameThatMayHoldDataIsNotRepeated() {
    String problem = QueryParams.problem(Map.of("alice@example.com", List.of("x")), JOBS);
    assertTrue(problem.startsWith("a query parameter is not one this route takes"), problem);
    assertFalse(problem.contains("alice"), problem);
  }

  /**
   * A path two documented templates match is judged by the route that serves it: {@code
   * /v1/audit/lineage/model/timeline} is the lineage of an agent called "timeline" (AuditRoutes tries the
   * literal {@code lineage} first), and its {@code ?version=} was refused as the timeline route's, which
   * takes {@code asOf}, because the document lists the timeline first.
   */
  @Test
  void aPathTwoTemplatesMatchTakesTheQueryOfTheRouteThatServesIt() {
    assertEquals(java.util.Optional.of(List.of("version")),
        ApiRoutes.queryParameters("GET", "/v1/audit/lineage/model/timeline"));
    assertEquals(java.util.Optional.of(List.of("asOf")), ApiRoutes.queryParameters("GET", "/v1/audit/model/a1/timeline"));
    assertEquals(java.util.Optional.of(List.of("asOf", "after", "limit")),
        ApiRoutes.queryParameters("HEAD", "/v1/audit/session/s1"));
    assertEquals(java.util.Optional.empty(), ApiRoutes.queryParameters("DELETE", "/v1/sessions/s1"));
    assertTrue(ApiRoutes.documented("/v1/audit/lineage/model/timeline"));
    assertFalse(ApiRoutes.documented("/v1/sessions//events"), "an empty id is no id");
  }

  /** What a route reads: the value as sent, or (an optional filter) nothing when it is sent empty. */
  @Test
  void aRouteReadsTheValueAsSentOrOnlyWhenGiven() {
    QueryParams.Query query = new QueryParams.Query(Map.of("agentId", List.of("a1"), "status", List.of(" ")));
    assertEquals(java.util.Optional.of("a1"), query.given("agentId"));
    assertEquals(java.util.Optional.of(" "), query.sent("status"));
    assertEquals(java.util.Optional.empty(), query.given("status"), "sent empty: as if not sent");
    assertEquals(java.util.Optional.empty(), query.sent("missing"));
  }

  /**
   * {@code ?asOf=} takes what {@code audit --as-of} and {@code export --since} take: an instant, a time
   * with an offset, a date. A {@code +} typed into the URL arrives as a space (query decoding) and is
   * read as the offset's sign it was.
   */
  @Test
  void aQueryTimeIsAnInstantAnOffsetTimeOrADate() {
    Instant t = Instant.parse("2026-11-20T02:00:00Z");
    assertEquals(t, QueryParams.instant("asOf", "2026-11-20T02:00:00Z"));
    assertEquals(t, QueryParams.instant("asOf", "2026-11-20T10:00:00+08:00"));
    assertEquals(t, QueryParams.instant("asOf", "2026-11-20T10:00:00 08:00"), "a + sent unencoded");
    assertEquals(t, QueryParams.instant("asOf", "2026-11-20T10:00 08:00"));
    assertEquals(t, QueryParams.instant("asOf", "2026-11-19T21:00:00-05:00"));
    assertEquals(Instant.parse("2026-11-20T00:00:00Z"), QueryParams.instant("asOf", "2026-11-20"));
    assertEquals(Instant.parse("2026-11-20T10:00:00.5Z"), QueryParams.instant("asOf", "2026-11-20T10:00:00.5Z"));
  }

  @Test
  void anythingElseIsA400NamingTheParameter() {
    for (String bad : new String[] {"noon", "2026-11-21 08:00", "2026-11-21T10:00:00  08:00",
        "2026-11-21T10:00:00 8", "2026-13-01"}) {
      BadRequest e = assertThrows(BadRequest.class, () -> QueryParams.instant("since", bad), bad);
      assertTrue(e.getMessage().startsWith("since is not an ISO-8601 time, e.g. 2026-11-20T02:00:00Z"), e.getMessage());
      assertFalse(e.getMessage().contains(bad), "the value sent is not repeated: " + e.getMessage());
    }
  }

  /** A time without a zone is ISO-8601: the answer says what it lacks, as the command line's does. */
  @Test
  void aTimeWithoutAZoneIsToldSo() {
    for (String local : new String[] {"2026-11-21T02:00:00", "2026-11-21T02:00", "2026-11-21T02:00:00.25"}) {
      BadRequest e = assertThrows(BadRequest.class, () -> QueryParams.instant("asOf", local), local);
      assertTrue(e.getMessage().startsWith("asOf has no time zone: add Z for UTC or the offset of yours"),
          e.getMessage());
      assertFalse(e.getMessage().contains(local), "the value sent is not repeated: " + e.getMessage());
    }
  }
}
