package io.otl.core.session;

import static io.otl.core.session.RecordPlannerRefusalsTest.FULL;
import static io.otl.core.session.RecordPlannerRefusalsTest.NOW;
import static io.otl.core.session.RecordPlannerRefusalsTest.active;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.otl.core.Sha256;
import io.otl.core.session.AgentSession.Event;
import io.otl.core.session.AgentSession.FeedbackRecorded;
import io.otl.core.session.AgentSession.Recorded;
import io.otl.core.session.AgentSession.State;
import io.otl.core.session.RecordPlanner.Store;
import io.otl.core.session.SessionModel.FeedbackKind;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A feedback without feedbackId is one feedback however its kind is spelled ("rating", "RATING",
 * AgentScope's "USER_RATING"): the session stores the kind, so its derived id is over the kind too.
 */
class RecordPlannerFeedbackSpellingTest {
  private static final Instant AT = Instant.parse("2026-11-20T01:59:30Z");
  private final RecordPlanner planner = new RecordPlanner("s1", FULL);
  private State state = active(planner);

  private Recorded record(SessionInput input) {
    Store store = assertInstanceOf(Store.class, planner.plan(state, "a1", List.of(input), NOW));
    for (Event e : store.events()) state = state.apply(e);
    return store.reply();
  }

  private static SessionInput.Feedback rating(String kind, String source) {
    return new SessionInput.Feedback(null, AT, kind, 4.0, null, source);
  }

  @Test
  void aRetrySpelledOtherwiseIsTheSameFeedback() {
    assertEquals(1, record(rating("rating", "survey")).accepted());
    assertEquals(new Recorded(0, 1, true), record(rating("RATING", "survey")));
    assertEquals(new Recorded(0, 1, true), record(rating("USER_RATING", "survey")));
    assertEquals(1, state.feedback().size());
    assertEquals(DerivedEventIds.of(rating("RATING", "survey"), FULL.desensitizer()),
        state.feedback().get(0).eventId());
  }

  /**
   * Pinned, checked outside Java: {@code printf '%s' 'feedback:{"at":"2026-11-20T01:59:30Z","kind":"RATING",
   * "source":"survey","value":4}' | sha256sum | cut -c1-32}: what earlier builds gave "RATING", and now every spelling.
   */
  @Test
  void aCanonicalSpellingKeepsTheIdEarlierBuildsGaveIt() {
    String id = "d2:d705a1d54f9896553042d83e0395d81c";
    assertEquals(id, DerivedEventIds.of(rating("RATING", "survey")));
    for (String spelled : List.of("RATING", "rating", "User_Rating")) {
      assertEquals(id, DerivedEventIds.of(rating(spelled, "survey"), FULL.desensitizer()), spelled);
    }
  }

  @Test
  void onlyTheKindAndAValueTheKindDoesNotStoreChange() {
    SessionInput.Feedback sent = new SessionInput.Feedback("e1", AT, "positive", 1.0, null, "app", "msg-1");
    assertEquals(new SessionInput.Feedback("e1", AT, "THUMBS_UP", null, null, "app", "msg-1"),
        DerivedEventIds.asStored(sent));
    SessionInput.Feedback rating = new SessionInput.Feedback(null, AT, "user_rating", 4.0, null, "app", "msg-1");
    assertEquals(new SessionInput.Feedback(null, AT, "RATING", 4.0, null, "app", "msg-1"),
        DerivedEventIds.asStored(rating));
  }

  /** A thumb sent with 1 (as clients do) and its retry without a value: the session stores no value for either. */
  @Test
  void aThumbWithAValueAndOneWithoutAreOneThumb() {
    assertEquals(1, record(new SessionInput.Feedback(null, AT, "THUMBS_UP", 1.0, null, "app")).accepted());
    assertEquals(new Recorded(0, 1, true), record(new SessionInput.Feedback(null, AT, "THUMBS_UP", null, null, "app")));
    assertEquals(new Recorded(0, 1, true), record(new SessionInput.Feedback(null, AT, "positive", 1.0, null, "app")));
    assertEquals(1, state.feedback().size());
  }

  /** What a build before this one stored: the id over the kind as sent, with or without personal data. */
  @Test
  void aRetryOfWhatAnEarlierBuildStoredUnderItsSpellingIsADuplicate() {
    for (String source : List.of("survey", "call me on 13812345678")) {
      state = active(planner);
      SessionInput.Feedback sent = rating("user_rating", source);
      String canonical = DerivedEventIds.canonical(sent);
      String stored = FULL.desensitizer().apply(canonical);
      String earlierId = (stored.equals(canonical) ? "d2:" : "d3:") + Sha256.hex(stored, 16);
      state = state.apply(new FeedbackRecorded(earlierId, AT, NOW, earlierId, FeedbackKind.RATING, 4.0,
          FULL.desensitizer().apply(source), null));
      assertEquals(new Recorded(0, 1, true), record(sent), source);
      assertEquals(1, state.feedback().size(), source);
    }
  }

  /**
   * What a build before session 44 stored under the spelling it was sent in, retried after the upgrade in
   * another spelling (trial t153: "rating" sent to the old build, "RATING" after; a thumb sent with 1, then
   * without): the retry's id is over the stored kind, the earlier one over the old spelling, and the session
   * took the retry as a second feedback, counted twice in the reward.
   */
  @Test
  void aRetrySpelledOtherwiseThanWhatAnEarlierBuildStoredIsADuplicate() {
    record Case(SessionInput.Feedback earlier, SessionInput.Feedback retry) {}
    for (Case c : List.of(
        new Case(rating("rating", "survey"), rating("RATING", "survey")),
        new Case(rating("user_rating", "mail bob@example.com"), rating("Rating", "mail bob@example.com")),
        new Case(new SessionInput.Feedback(null, AT, "thumbs_up", 1.0, null, "app", "msg-1"),
            new SessionInput.Feedback(null, AT, "THUMBS_UP", null, null, "app", "msg-1")),
        new Case(new SessionInput.Feedback(null, AT, "THUMBS_UP", 1.0, null, "app"),
            new SessionInput.Feedback(null, AT, "POSITIVE", null, null, "app")),
        new Case(new SessionInput.Feedback(null, AT, "NEGATIVE", -1.0, null, null),
            new SessionInput.Feedback(null, AT, "thumbs_down", null, null, null)))) {
      state = active(planner);
      SessionInput.Feedback sent = c.earlier();
      String canonical = DerivedEventIds.canonical(sent);
      String stored = FULL.desensitizer().apply(canonical);
      String earlierId = (stored.equals(canonical) ? "d2:" : "d3:") + Sha256.hex(stored, 16);
      FeedbackKind kind = FeedbackKind.parse(sent.kind());
      state = state.apply(new FeedbackRecorded(earlierId, AT, NOW, earlierId, kind,
          kind == FeedbackKind.RATING ? sent.value() : null,
          sent.source() == null ? null : FULL.desensitizer().apply(sent.source()), sent.msgId()));
      assertEquals(new Recorded(0, 1, true), record(c.retry()), c.toString());
      assertEquals(1, state.feedback().size(), c.toString());
    }
  }

  /** The same kind and value but at another time is another feedback, before and after the upgrade. */
  @Test
  void anotherFeedbackOfTheSameKindIsStillStored() {
    SessionInput.Feedback sent = rating("rating", "survey");
    String earlierId = "d2:" + Sha256.hex(DerivedEventIds.canonical(sent), 16);
    state = state.apply(new FeedbackRecorded(earlierId, AT, NOW, earlierId, FeedbackKind.RATING, 4.0, "survey", null));
    assertEquals(1, record(new SessionInput.Feedback(null, AT.plusSeconds(1), "RATING", 4.0, null, "survey")).accepted());
    assertEquals(1, record(new SessionInput.Feedback(null, AT, "RATING", 5.0, null, "survey")).accepted());
    assertEquals(3, state.feedback().size());
  }
}
