package io.otl.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.core.session.SessionInput;
import io.otl.wire.EventJson;
import io.otl.wire.InvalidEventException;
import java.util.ArrayList;
import java.util.List;

/**
 * The HTTP edge's view of the event objects of design §7.1: the {@code events} array of a request
 * body (with the per-request limit), each element parsed by {@link EventJson} (shared with Kafka
 * ingestion), whose field errors become 400s naming the field.
 */
public final class EventParser {
  private final int maxEvents;

  public EventParser(int maxEvents) {
    this.maxEvents = maxEvents;
  }

  /** The {@code events} array of a request body. */
  public List<SessionInput> parseBatch(JsonNode events) {
    if (events == null || events.isNull()) throw BadRequest.invalid("events is required: an array of event objects");
    if (!events.isArray()) throw BadRequest.invalid("events must be an array of event objects");
    if (events.isEmpty()) throw BadRequest.invalid("events must hold at least one event");
    if (events.size() > maxEvents) {
      throw new BadRequest(413, "too_many_events", "events holds " + events.size() + " events; at most " + maxEvents
          + " are accepted per request (data-collector.max-events-per-request): split the batch");
    }
    List<SessionInput> out = new ArrayList<>(events.size());
    for (int i = 0; i < events.size(); i++) out.add(parse(events.get(i), "events[" + i + "]"));
    return out;
  }

  /** One event object; {@code where} prefixes field names in errors. */
  public SessionInput parse(JsonNode e, String where) {
    try {
      return EventJson.parse(e, where);
    } catch (InvalidEventException ex) {
      throw BadRequest.invalid(ex.getMessage());
    }
  }

  static String text(JsonNode e, String where, String field) {
    try {
      return EventJson.text(e, where, field);
    } catch (InvalidEventException ex) {
      throw BadRequest.invalid(ex.getMessage());
    }
  }
}
