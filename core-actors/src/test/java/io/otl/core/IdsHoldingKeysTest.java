package io.otl.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.session.PiiRules;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Trial t159: {@code X-Agent-Id: sk-proj-…} (the agent's key in the wrong header) was accepted, logged,
 * put in metric labels and journaled as the agent id. A new session's or agent's id holding a provider's
 * key is refused; only the providers' key formats count, as the whole id or a whole part of it, so that
 * namespaced ids the whole secret rule took for credentials (review t160) stay valid. Keys are assembled
 * at run time: no key-shaped literal in the source.
 */
class IdsHoldingKeysTest {
  private static final String MIXED = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";

  private static String body(int n) {
    return MIXED.repeat(n / MIXED.length() + 1).substring(0, n);
  }

  static final List<String> KEYS = List.of("sk-" + "proj-" + body(40), "sk-" + body(48), "sk-" + "ant-api03-" + body(40),
      "hf_" + body(34), "ghp_" + body(36), "gho_" + body(36), "ghs_" + body(36), "github_pat_" + "11ABCDEFG0_" + body(50),
      "AKIA" + "IOSFODNN7EXAMPLE", "ASIA" + "IOSFODNN7EXAMPLE", "AIza" + body(35), "xoxb-" + "1234567890-" + body(24),
      "sk_live_" + body(24), "rk_live_" + body(24), "eyJ" + "hbGciOiJIUzI1NiJ9.eyJ" + "zdWIiOiIxMjM0NTY3ODkwIn0." + body(43),
      "gsk_" + body(52), "glpat-" + "x9Fq-Zt2_bK7mLp4Rw8v");

  @Test
  void aKeyAsTheIdOrAWholePartOfItIsFound() {
    for (String key : KEYS) {
      for (String id : List.of(key, "gwa-" + key, key + ":turn-1", "tenant.7:" + key + ".a")) {
        assertTrue(PiiRules.keyInId(id), id);
        String problem = Ids.keyProblem("X-Agent-Id", id);
        assertNotNull(problem, id);
        assertFalse(problem.contains(key), "the message repeats the key: " + problem);
        assertTrue(problem.startsWith("X-Agent-Id looks like an API key; a key belongs in the Authorization header"),
            problem);
      }
    }
  }

  @Test
  void ordinaryIdsStayValid() {
    for (String id : List.of("support:reset-password:ticket-48213", "user-token:20240101a", "sk-learn-demo",
        "hf_session_1", "task-sk-2", "support-bot", "sess-" + UUID.randomUUID(), "task-based-planner",
        "sk-learn-compatible-pipeline-code", "d2:0123456789abcdef", "chatcmpl-AbCdEf1234567890",
        "gw-" + UUID.randomUUID(), "access-token-docs", "api_key=abc12345678", "password:hunter2024",
        "bearer-AbCdEf0123456789AbCd", "xoxb-bot-2024-01", "AKIA-docs", "hf_abcdefghijklmnopqrstuvwxyzabcdef",
        // a key's prefix glued to a word is no key's start, and a key cut by letters is no key
        "mask-" + body(30), "ghp_" + body(20), "risk-" + body(24))) {
      assertFalse(PiiRules.keyInId(id), id);
      assertNull(Ids.keyProblem("sessionId", id), id);
      assertEquals(id, Ids.shown(id));
    }
  }

  @Test
  void logsAndLabelsShowAKeyLikeIdWithoutItsKey() {
    String key = KEYS.get(0);
    String shown = Ids.shown("legacy-" + key);
    assertFalse(shown.contains(key.substring(8)), shown);
    assertTrue(shown.matches("key-like-id-[0-9a-f]{10}"), shown);
    assertEquals(shown, Ids.shown("legacy-" + key), "the same id is shown the same");
    assertTrue(Ids.isValidSessionId(shown));
  }
}
