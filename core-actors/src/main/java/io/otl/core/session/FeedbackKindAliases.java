package io.otl.core.session;

import io.otl.core.session.SessionModel.FeedbackKind;
import java.util.Locale;
import java.util.Map;

/**
 * The feedback kinds AgentScope's own {@code FeedbackType} uses (the seed article's controller
 * sends {@code USER_RATING}, {@code POSITIVE}, {@code NEGATIVE}), mapped to ours (design §3.1.1).
 * The one table every door goes through (HTTP, Kafka, Java API all reach
 * {@link FeedbackKind#parse}), so an alias is accepted everywhere and stored under the canonical
 * kind: the journal, reward and exports never see the alias.
 */
public final class FeedbackKindAliases {
  private static final Map<String, FeedbackKind> ALIASES = Map.of(
      "USER_RATING", FeedbackKind.RATING,
      "POSITIVE", FeedbackKind.THUMBS_UP,
      "NEGATIVE", FeedbackKind.THUMBS_DOWN);

  /** Listed in the error for an unknown kind. */
  public static final String DESCRIPTION = "USER_RATING (= RATING), POSITIVE (= THUMBS_UP), NEGATIVE (= THUMBS_DOWN)";

  /** What is wrong with a kind that is neither ours nor an alias (after the field's name). */
  public static final String UNKNOWN_KIND = " is not one of the allowed: THUMBS_UP, THUMBS_DOWN, RATING, ADOPTED, "
      + "REPEATED_QUESTION, HUMAN_HANDOFF, or AgentScope's " + DESCRIPTION;

  private FeedbackKindAliases() {}

  /** The canonical kind for an AgentScope name (any case), or null when {@code name} is not one. */
  public static FeedbackKind resolve(String name) {
    return name == null ? null : ALIASES.get(name.toUpperCase(Locale.ROOT));
  }

  /** Every alias and its canonical kind. */
  public static Map<String, FeedbackKind> all() {
    return ALIASES;
  }
}
