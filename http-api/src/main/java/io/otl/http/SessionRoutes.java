package io.otl.http;

import static io.otl.http.RequestBodies.body;
import static io.otl.http.RequestBodies.onlyFields;
import static org.apache.pekko.http.javadsl.server.Directives.completeWithFuture;
import static org.apache.pekko.http.javadsl.server.Directives.concat;
import static org.apache.pekko.http.javadsl.server.Directives.get;
import static org.apache.pekko.http.javadsl.server.Directives.path;
import static org.apache.pekko.http.javadsl.server.Directives.pathEndOrSingleSlash;
import static org.apache.pekko.http.javadsl.server.Directives.pathPrefix;
import static org.apache.pekko.http.javadsl.server.Directives.post;
import static org.apache.pekko.http.javadsl.server.PathMatchers.segment;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.core.Ids;
import io.otl.core.api.DataCollector;
import io.otl.core.session.AgentSession;
import io.otl.core.session.SessionInput;
import io.otl.http.gateway.TurnsInFlight;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCode;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.util.ByteString;

/** Sessions and feedback: {@code /v1/sessions/…} and the AgentScope-compatible {@code /v1/feedback/…} (also at the root). */
public final class SessionRoutes {
  private final DataCollector collector;
  private final EventParser parser;
  private final ApiMetrics metrics;
  private final int maxJsonDepth;
  /** The gateway's turns not yet recorded; null without a gateway. */
  private final TurnsInFlight gatewayTurns;

  /**
   * The session's "its first events must name the agentId" speaks of an events batch; this caller
   * sent one feedback object, for a session recorded under another id or not yet.
   */
  private static final String FEEDBACK_NEEDS_A_SESSION = "feedback applies to a session already recorded (its "
      + "events, or a gateway call); to store feedback as a session's first event, name its agent with \"agentId\" "
      + "in the body";
  /**
   * Feedback naming a response (msgId) cannot be a session's first event: the response must be recorded.
   * An unknown session then most often means a gateway answer not recorded yet, rated through another
   * node than the one that answered (trial t157: 8 of 30 immediate ratings through the other node of two);
   * naming the agent, as the message above advises, only led to a second 404 for the msgId.
   */
  private static final String RESPONSE_FEEDBACK_NEEDS_A_SESSION = "feedback naming a msgId applies to a response "
      + "already recorded; a gateway answer is recorded a moment after it is sent, by the node that answered: "
      + "send the feedback to that node, or retry shortly (docs/gateway.md, per-turn feedback)";
  /**
   * rate and thumbs (AgentScope's routes) cannot name an agent, so "name the agentId" sends their
   * caller nowhere: they rate a session recorded before.
   */
  private static final String RATING_NEEDS_A_SESSION =
      "rate and thumbs apply to a session already recorded (its events, or a gateway call)";

  public SessionRoutes(DataCollector collector, int maxEventsPerRequest, ApiMetrics metrics) {
    this(collector, maxEventsPerRequest, metrics, StrictJson.DEFAULT_MAX_DEPTH, null);
  }

  /**
   * @param maxJsonDepth deepest nesting accepted in an events or feedback body (body object = 1)
   * @param gatewayTurns this node's gateway turns not yet recorded (null: no gateway): a write to a
   *     session waits for them, so feedback naming an answer's msgId, or a task result, sent the
   *     moment the answer arrived finds that answer stored; so does a read of the session
   */
  public SessionRoutes(DataCollector collector, int maxEventsPerRequest, ApiMetrics metrics, int maxJsonDepth,
      TurnsInFlight gatewayTurns) {
    this.collector = collector;
    this.parser = new EventParser(maxEventsPerRequest);
    this.metrics = metrics;
    this.maxJsonDepth = maxJsonDepth;
    this.gatewayTurns = gatewayTurns;
  }

  public Route route() {
    return concat(
        pathPrefix("sessions", () -> pathPrefix(segment(), sessionId -> concat(
            pathEndOrSingleSlash(() -> get(() -> completeWithFuture(guard(() -> getSession(sessionId))))),
            path("events", () -> post(() -> body(b ->
                completeWithFuture(guard(() -> postEvents(sessionId, b)))))),
            path("feedback", () -> post(() -> body(b ->
                completeWithFuture(guard(() -> postFeedback(sessionId, b))))))))),
        feedbackRoute());
  }

  /**
   * {@code feedback/rate} and {@code feedback/thumbs}: mounted under {@code /v1} and, because the
   * AgentScope article's controller serves them at the root, also at {@code /feedback/…} (design
   * §7.1). One route value, so both paths share handlers and validation.
   */
  public Route feedbackRoute() {
    return pathPrefix("feedback", () -> concat(
        path("rate", () -> post(() -> QueryParams.onlyOrForm(List.of("sessionId", "score"), query ->
            completeWithFuture(guard(() -> rate(query.sent("sessionId"), query.sent("score"))))))),
        path("thumbs", () -> post(() -> QueryParams.onlyOrForm(List.of("sessionId", "helpful"), query ->
            completeWithFuture(guard(() -> thumbs(query.sent("sessionId"), query.sent("helpful")))))))));
  }

  /** Runs a handler, turning anything it throws into the matching error response. */
  static CompletionStage<HttpResponse> guard(java.util.function.Supplier<CompletionStage<HttpResponse>> handler) {
    try {
      return handler.get().exceptionally(ApiErrors::toResponse);
    } catch (RuntimeException e) {
      return CompletableFuture.completedFuture(ApiErrors.toResponse(e));
    }
  }

  static void checkSessionId(String sessionId) {
    String p = Ids.problem("sessionId", sessionId, Ids.MAX_SESSION_ID);
    if (p != null) throw BadRequest.invalid(p);
  }

  /**
   * The session as stored, after this node's gateway turns of it are recorded (as a write waits): the
   * README's first steps, a chat completion and then {@code GET /v1/sessions/s-1}, answered 404 (or the
   * turn without its answer) about one time in fifteen when the read overtook the recording (trial t49).
   */
  private CompletionStage<HttpResponse> getSession(String sessionId) {
    checkSessionId(sessionId);
    CompletionStage<Void> turnsRecorded = gatewayTurns == null
        ? CompletableFuture.completedFuture(null) : gatewayTurns.settled(sessionId);
    return turnsRecorded.thenCompose(x -> collector.trajectory(sessionId)).thenApply(s -> s
        .map(state -> Json.ok(SessionView.of(sessionId, state)))
        .orElseGet(() -> Json.error(StatusCodes.NOT_FOUND, "not_found", "session " + io.otl.core.Ids.shown(sessionId) + " is unknown")));
  }

  private CompletionStage<HttpResponse> postEvents(String sessionId, ByteString bytes) {
    checkSessionId(sessionId);
    JsonNode body = StrictJson.readObject(bytes, maxJsonDepth);
    onlyFields(body, Set.of("agentId", "events"));
    String agentId = EventParser.text(body, "body", "agentId");
    String agentProblem = Ids.problem("agentId", agentId, Ids.MAX_AGENT_ID);
    if (agentProblem != null) throw BadRequest.invalid(agentProblem);
    List<SessionInput> inputs = parser.parseBatch(body.get("events"));
    sameSessionAndAgent(body.get("events"), sessionId, agentId);
    return record(sessionId, agentId, inputs, StatusCodes.ACCEPTED, false, null);
  }

  /**
   * An event object may carry {@code sessionId} and {@code agentId} (the Kafka record shape); over
   * HTTP the path and the body name them, and an event naming others was meant for another
   * session: storing it here would put it in the wrong trajectory without a word.
   */
  private static void sameSessionAndAgent(JsonNode events, String sessionId, String agentId) {
    for (int i = 0; i < events.size(); i++) {
      String s = EventParser.text(events.get(i), "events[" + i + "]", "sessionId");
      if (s != null && !s.equals(sessionId)) {
        throw BadRequest.invalid("events[" + i + "].sessionId is not the session of the path; leave it out or send "
            + "the event to its own session");
      }
      String a = EventParser.text(events.get(i), "events[" + i + "]", "agentId");
      if (a != null && !a.equals(agentId)) {
        throw BadRequest.invalid("events[" + i + "].agentId is not the body's agentId; leave it out or send the event "
            + "with its own agent");
      }
    }
  }

  private CompletionStage<HttpResponse> postFeedback(String sessionId, ByteString bytes) {
    checkSessionId(sessionId);
    JsonNode body = StrictJson.readObject(bytes, maxJsonDepth);
    onlyFields(body, Set.of("kind", "value", "feedbackId", "source", "eventId", "at", "agentId", "msgId"));
    String agentId = EventParser.text(body, "body", "agentId");
    if (agentId != null && Ids.problem("agentId", agentId, Ids.MAX_AGENT_ID) != null) {
      throw BadRequest.invalid(Ids.problem("agentId", agentId, Ids.MAX_AGENT_ID));
    }
    ((com.fasterxml.jackson.databind.node.ObjectNode) body).put("type", "feedback");
    ((com.fasterxml.jackson.databind.node.ObjectNode) body).remove("agentId");
    SessionInput input = parser.parse(body, "body");
    if (((SessionInput.Feedback) input).kind() == null) throw BadRequest.invalid("kind is required");
    String unknownSession = ((SessionInput.Feedback) input).msgId() != null
        ? RESPONSE_FEEDBACK_NEEDS_A_SESSION : FEEDBACK_NEEDS_A_SESSION;
    return record(sessionId, agentId, List.of(input), StatusCodes.ACCEPTED, true, unknownSession);
  }

  private CompletionStage<HttpResponse> rate(Optional<String> sessionId, Optional<String> score) {
    String s = sessionId.orElseThrow(() -> BadRequest.invalid("the query parameter sessionId is required"));
    checkSessionId(s);
    String raw = score.orElseThrow(() -> BadRequest.invalid("the query parameter score is required (1-5)"));
    // Sent empty (`score=`) is not sent: say it is missing, not that "" is a bad number.
    if (raw.isBlank()) throw BadRequest.invalid("the query parameter score is required (1-5)");
    long value;
    try {
      value = QueryParams.integer(QueryParams.spacesTrimmed(raw));
    } catch (NumberFormatException e) {
      throw BadRequest.invalid("score is not an integer from 1 to 5");
    }
    // the value is not repeated: a long number here is as likely a phone number as a typo
    if (value < 1 || value > 5) throw BadRequest.invalid("score is out of range; an integer from 1 to 5 is expected");
    return record(s, null, List.of(new SessionInput.Feedback(null, null, "RATING", (double) value, null, "agentscope")),
        StatusCodes.OK, true, RATING_NEEDS_A_SESSION);
  }

  private CompletionStage<HttpResponse> thumbs(Optional<String> sessionId, Optional<String> helpful) {
    String s = sessionId.orElseThrow(() -> BadRequest.invalid("the query parameter sessionId is required"));
    checkSessionId(s);
    String raw = helpful.orElseThrow(() -> BadRequest.invalid("the query parameter helpful is required (true/false)"));
    if (raw.isBlank()) throw BadRequest.invalid("the query parameter helpful is required (true/false)");
    // The words Spring's @RequestParam boolean takes, as the seed article's controller declares it.
    boolean up = switch (QueryParams.spacesTrimmed(raw).toLowerCase(java.util.Locale.ROOT)) {
      case "true", "1", "yes", "on" -> true;
      case "false", "0", "no", "off" -> false;
      // Name every word taken, so a client sending "y" learns that "yes" would do.
      default -> throw BadRequest.invalid("helpful is not true or false (also taken: 1/0, yes/no, on/off)");
    };
    return record(s, null, List.of(new SessionInput.Feedback(null, null, up ? "THUMBS_UP" : "THUMBS_DOWN", null, null,
        "agentscope")), StatusCodes.OK, true, RATING_NEEDS_A_SESSION);
  }

  /**
   * @param single the request was one event (feedback), not an events batch: errors name its fields alone
   * @param unknownSession what to tell a caller that named no agent when the session is unknown (null:
   *     the session's own answer, which speaks of an events batch)
   */
  private CompletionStage<HttpResponse> record(String sessionId, String agentId, List<SessionInput> inputs,
      StatusCode success, boolean single, String unknownSession) {
    if (gatewayTurns == null) return submit(sessionId, agentId, inputs, success, single, unknownSession);
    return gatewayTurns.recorded(sessionId).thenCompose(all -> {
      if (all) return submit(sessionId, agentId, inputs, success, single, unknownSession);
      // A result would complete the session without the answer still to be recorded: not sent at all.
      if (inputs.stream().anyMatch(i -> i instanceof SessionInput.Result)) {
        return CompletableFuture.completedFuture(notRecordedYet(sessionId));
      }
      return submit(sessionId, agentId, inputs, success, single, unknownSession)
          .thenApply(response -> response.status().intValue() == 404 ? notRecordedYet(sessionId) : response);
    });
  }

  /** This node's gateway answer in the session is still being recorded, past the write's wait for it. */
  private static HttpResponse notRecordedYet(String sessionId) {
    return ApiErrors.unavailable("this node's answer in session " + sessionId + " is not recorded yet (its"
        + " session's node may be down, or moving it to another node); retry the request");
  }

  private CompletionStage<HttpResponse> submit(String sessionId, String agentId, List<SessionInput> inputs,
      StatusCode success, boolean single, String unknownSession) {
    long start = System.nanoTime();
    return collector.submit(sessionId, agentId, inputs).thenApply(reply -> {
      if (reply instanceof AgentSession.Recorded r) {
        if (r.accepted() > 0) metrics.journalWrite((System.nanoTime() - start) / 1e9);
        metrics.eventsAccepted(r.accepted(), r.duplicates());
        return Json.response(success, SessionView.map("accepted", r.accepted(), "duplicates", r.duplicates(),
            "sampled", r.sampled()));
      }
      AgentSession.Rejected rej = (AgentSession.Rejected) reply;
      metrics.eventsRejected(inputs.size());
      if (unknownSession != null && agentId == null && rej.code() == AgentSession.RejectionCode.NOT_FOUND
          && "sessionId".equals(rej.field())) {
        return Json.error(StatusCodes.NOT_FOUND, "not_found",
            "session " + sessionId + " is unknown: " + unknownSession);
      }
      return Json.rejected(single ? rej.asSingleEvent() : rej);
    });
  }
}
