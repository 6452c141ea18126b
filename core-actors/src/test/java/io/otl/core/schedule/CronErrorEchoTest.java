package io.otl.core.schedule;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * A cron expression's error quoted the field it could not read: {@code PUT /v1/training/{agentId}/policy}
 * with {@code trigger.cron = "0 0 * * * alice@example.com"} answered {@code day-of-week field
 * "alice@example.com": unknown name "alice@example.com"}, where every other policy value holding personal
 * data is refused without repeating it (trial t159). The field's personal data is shown as its placeholder.
 */
class CronErrorEchoTest {
  @Test
  void aFieldHoldingPersonalDataIsNotQuoted() {
    for (String field : new String[] {"alice.pii@example.com", "13812345678", "sk-proj-" + "Ab3dEf6hIjK9mNoPqRsT1uVwXyZ0"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> CronSchedule.parse("0 0 * * * " + field));
      assertFalse(e.getMessage().contains(field), e.getMessage());
      assertTrue(e.getMessage().startsWith("day-of-week field \"["), e.getMessage());
    }
  }

  @Test
  void anOrdinaryMistakeIsStillQuoted() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CronSchedule.parse("0 0 * * * FUNDAY"));
    assertTrue(e.getMessage().contains("unknown name \"FUNDAY\""), e.getMessage());
  }
}
