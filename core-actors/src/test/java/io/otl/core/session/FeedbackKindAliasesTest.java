package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.otl.core.session.SessionModel.FeedbackKind;
import org.junit.jupiter.api.Test;

/** AgentScope's FeedbackType names resolve to our kinds; nothing else is invented. */
class FeedbackKindAliasesTest {
  @Test
  void articleNamesMapToCanonicalKinds() {
    assertEquals(FeedbackKind.RATING, FeedbackKind.parse("USER_RATING"));
    assertEquals(FeedbackKind.THUMBS_UP, FeedbackKind.parse("POSITIVE"));
    assertEquals(FeedbackKind.THUMBS_DOWN, FeedbackKind.parse("negative"));
    assertEquals(FeedbackKind.ADOPTED, FeedbackKind.parse("ADOPTED"));
    assertNull(FeedbackKind.parse("LIKE"));
    assertNull(FeedbackKind.parse("USER RATING"));
    assertNull(FeedbackKind.parse(null));
  }

  @Test
  void everyAliasNamesAKindThatIsNotItself() {
    assertEquals(java.util.Map.of("USER_RATING", FeedbackKind.RATING, "POSITIVE", FeedbackKind.THUMBS_UP,
        "NEGATIVE", FeedbackKind.THUMBS_DOWN), FeedbackKindAliases.all());
    FeedbackKindAliases.all().forEach((alias, kind) -> {
      assertNull(parseCanonicalOnly(alias), alias + " must not shadow a canonical kind");
      assertEquals(kind, FeedbackKind.parse(alias));
    });
  }

  private static FeedbackKind parseCanonicalOnly(String s) {
    for (FeedbackKind k : FeedbackKind.values()) if (k.name().equalsIgnoreCase(s)) return k;
    return null;
  }
}
