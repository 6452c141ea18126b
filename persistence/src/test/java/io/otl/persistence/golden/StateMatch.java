package io.otl.persistence.golden;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Iterator;
import java.util.Map;

/**
 * Whether a replayed state still holds everything a golden journal recorded: every recorded field
 * with the same value (numbers by value, arrays element by element). Fields a later release added
 * to a state class are not in the recording and are ignored; a field removed or changed is a
 * difference, which needs a migration or a deliberate, documented decision.
 */
final class StateMatch {
  private StateMatch() {}

  /** The first difference as "path: expected … but was …", or null when {@code now} holds all of {@code recorded}. */
  static String difference(JsonNode recorded, JsonNode now, String path) {
    if (recorded.isObject()) {
      if (!now.isObject()) return at(path, recorded, now);
      for (Iterator<Map.Entry<String, JsonNode>> it = recorded.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> f = it.next();
        JsonNode other = now.get(f.getKey());
        if (other == null) return path + "." + f.getKey() + ": recorded, missing now";
        String d = difference(f.getValue(), other, path + "." + f.getKey());
        if (d != null) return d;
      }
      return null;
    }
    if (recorded.isArray()) {
      if (!now.isArray() || now.size() != recorded.size()) return at(path, recorded, now);
      for (int i = 0; i < recorded.size(); i++) {
        String d = difference(recorded.get(i), now.get(i), path + "[" + i + "]");
        if (d != null) return d;
      }
      return null;
    }
    if (recorded.isNumber() && now.isNumber()) {
      return recorded.decimalValue().compareTo(now.decimalValue()) == 0 ? null : at(path, recorded, now);
    }
    return recorded.equals(now) ? null : at(path, recorded, now);
  }

  private static String at(String path, JsonNode recorded, JsonNode now) {
    String p = path.isEmpty() ? "(state)" : path;
    String r = recorded.toString();
    String n = now.toString();
    return p + ": recorded " + (r.length() > 200 ? r.substring(0, 200) + "…" : r) + " but was "
        + (n.length() > 200 ? n.substring(0, 200) + "…" : n);
  }
}
