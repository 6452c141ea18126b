package io.otl.persistence.kafka;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.core.Ids;
import io.otl.core.session.SessionInput;
import io.otl.wire.EventJson;
import io.otl.wire.InvalidEventException;
import io.otl.wire.JsonLimits;
import io.otl.wire.JsonParseProblem;
import java.io.IOException;

/**
 * What one {@code agent-events} record means: an event of a session of an agent, or the reason it
 * cannot be recorded (then it goes to the dead-letter topic). The value is an event object of
 * design §7.1 plus {@code sessionId} and {@code agentId}; the key is the session id (a key that
 * contradicts the value's {@code sessionId} is refused, a value without one takes the key's).
 */
public sealed interface AgentEventRecord {

  /** Dead-letter codes ({@code otl-error-code} header) for records refused before the journal. */
  String NOT_JSON = "not_json";
  String NOT_AN_OBJECT = "not_an_object";
  String INVALID_SESSION_ID = "invalid_session_id";
  String INVALID_AGENT_ID = "invalid_agent_id";
  String SESSION_MISMATCH = "session_mismatch";
  String INVALID_EVENT = "invalid_event";

  record Event(String sessionId, String agentId, SessionInput input) implements AgentEventRecord {}

  record Invalid(String code, String reason) implements AgentEventRecord {}

  static AgentEventRecord parse(String key, byte[] value) {
    if (value == null) {
      // A tombstone (what a compacting producer sends to delete a key): nothing to record.
      return new Invalid(NOT_JSON, "value is null (a tombstone); expected an event object with sessionId and agentId");
    }
    if (value.length == 0) {
      return new Invalid(NOT_JSON, "value is empty; expected an event object with sessionId and agentId");
    }
    JsonNode node;
    try {
      node = io.otl.wire.StrictDocument.read(value); // as strict as the HTTP edge, UTF-8 checked
    } catch (IOException e) {
      // Valid JSON past the parser's own depth (1,000) is refused as one nested 33 deep is, not as no JSON.
      if (JsonParseProblem.tooDeep(e)) {
        return new Invalid(INVALID_EVENT, "value is nested more than " + JsonLimits.DEFAULT_MAX_DEPTH
            + " levels deep; at most " + JsonLimits.DEFAULT_MAX_DEPTH + " are accepted");
      }
      // The reason is a header of the dead letter and a line of the node's log: never the value's tokens.
      return new Invalid(NOT_JSON, "value is not valid JSON: " + JsonParseProblem.describe(e));
    }
    if (node == null || node.isMissingNode()) {
      // Only white space: no JSON document at all (RFC 8259), as an empty value; "null" is one.
      return new Invalid(NOT_JSON, "value is empty; expected an event object with sessionId and agentId");
    }
    if (!node.isObject()) {
      return new Invalid(NOT_AN_OBJECT, "value must be a JSON object (one event with sessionId and agentId)");
    }
    JsonLimits.Problem limit = JsonLimits.problem(node, "value", JsonLimits.DEFAULT_MAX_DEPTH);
    if (limit != null) return new Invalid(INVALID_EVENT, limit.message());
    try {
      // Fields are named as a producer sees them: "key" for the record key, "value.<field>" inside the value.
      String sessionId = EventJson.text(node, "value", "sessionId");
      if (sessionId == null && key == null) {
        return new Invalid(INVALID_SESSION_ID, Ids.problem("value.sessionId", null, Ids.MAX_SESSION_ID)
            + "; or give the record a key");
      }
      String sessionProblem = sessionId == null ? Ids.problem("key", key, Ids.MAX_SESSION_ID)
          : Ids.problem("value.sessionId", sessionId, Ids.MAX_SESSION_ID);
      if (sessionId == null) sessionId = key;
      if (sessionProblem != null) return new Invalid(INVALID_SESSION_ID, sessionProblem);
      if (key != null && !key.equals(sessionId)) {
        return new Invalid(SESSION_MISMATCH, "key " + shownKey(key) + " is not value.sessionId '" + Ids.shown(sessionId) + "'");
      }
      String agentId = EventJson.text(node, "value", "agentId");
      String agentProblem = Ids.problem("value.agentId", agentId, Ids.MAX_AGENT_ID);
      if (agentProblem != null) return new Invalid(INVALID_AGENT_ID, agentProblem);
      return new Event(sessionId, agentId, EventJson.parse(node, "value"));
    } catch (InvalidEventException e) {
      return new Invalid(INVALID_EVENT, e.getMessage());
    }
  }

  /**
   * The key as a reason may quote it: only when it could be a session id (those are checked for
   * personal data), and one holding an API key by its digest; any other key is client text, such as a
   * phone number or an e-mail address.
   */
  private static String shownKey(String key) {
    // An id holding an API key passes that check (an earlier build's session may have one): it is shown
    // by its digest, as the reason goes into otl-error and the node's log (trial t167).
    return Ids.problem("key", key, Ids.MAX_SESSION_ID) == null ? "'" + Ids.shown(key) + "'" : "(not a valid session id)";
  }
}
