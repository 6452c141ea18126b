package io.otl.http;

import io.otl.core.session.AgentSession;
import io.otl.wire.Views;
import java.util.List;
import java.util.Map;

/**
 * The session response shape of design §7.1, built from the entity's state. Built by {@link
 * Views#session}, which the audit's "state as of T" uses too, so both answer the same JSON.
 */
final class SessionView {
  private SessionView() {}

  static Map<String, Object> of(String sessionId, AgentSession.State s) {
    return Views.session(sessionId, s);
  }

  /** An insertion-ordered map from alternating keys and values (values may be null). */
  static Map<String, Object> map(Object... kv) {
    return Views.map(kv);
  }

  static List<Object> list(Object... items) {
    return List.of(items);
  }
}
