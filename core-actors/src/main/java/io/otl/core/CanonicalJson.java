package io.otl.core;

import com.fasterxml.jackson.databind.JsonNode;
import java.lang.reflect.RecordComponent;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.util.Collection;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;

/**
 * One fixed text for a value, for hashing into ids (design §4.1): never {@code toString()}, whose
 * rendering a JDK or library upgrade may change. The rules, all ours:
 *
 * <ul>
 *   <li>objects (records, maps, JSON objects): keys sorted by {@link String#compareTo}; a null
 *       value is left out, so a new optional field does not change the ids of inputs without it;
 *   <li>numbers: the exact decimal value, no exponent, no trailing zeros ({@code 1}, {@code 1.0}
 *       and {@code 1e0} are all {@code 1}; a double is expanded exactly, e.g. 0.1 is
 *       {@code 0.1000000000000000055511151231257827021181583404541015625});
 *   <li>strings: {@code "} and {@code \} escaped with a backslash, characters below U+0020 as
 *       {@code \}{@code u00xx} (lower-case hex), everything else as is; UTF-8 when hashed;
 *   <li>instants: ISO-8601 in UTC ({@link DateTimeFormatter#ISO_INSTANT}); enums: their name;
 *       lists and arrays: in order.
 * </ul>
 */
public final class CanonicalJson {
  private CanonicalJson() {}

  public static String of(Object value) {
    StringBuilder sb = new StringBuilder();
    write(value, sb);
    return sb.toString();
  }

  private static void write(Object v, StringBuilder sb) {
    if (v == null) {
      sb.append("null");
    } else if (v instanceof JsonNode n) {
      writeNode(n, sb);
    } else if (v instanceof CharSequence s) {
      string(s.toString(), sb);
    } else if (v instanceof Boolean b) {
      sb.append(b ? "true" : "false");
    } else if (v instanceof Number n) {
      number(n, sb);
    } else if (v instanceof Instant i) {
      string(DateTimeFormatter.ISO_INSTANT.format(i), sb);
    } else if (v instanceof Enum<?> e) {
      string(e.name(), sb);
    } else if (v instanceof Map<?, ?> m) {
      TreeMap<String, Object> sorted = new TreeMap<>();
      m.forEach((k, x) -> {
        if (x != null) sorted.put(String.valueOf(k), x);
      });
      object(sorted, sb);
    } else if (v instanceof Collection<?> c) {
      sb.append('[');
      boolean first = true;
      for (Object x : c) {
        if (!first) sb.append(',');
        first = false;
        write(x, sb);
      }
      sb.append(']');
    } else if (v.getClass().isRecord()) {
      TreeMap<String, Object> fields = new TreeMap<>();
      for (RecordComponent rc : v.getClass().getRecordComponents()) {
        try {
          Object x = rc.getAccessor().invoke(v);
          if (x != null) fields.put(rc.getName(), x);
        } catch (ReflectiveOperationException e) {
          throw new IllegalStateException("cannot read " + v.getClass().getName() + "." + rc.getName(), e);
        }
      }
      object(fields, sb);
    } else {
      throw new IllegalArgumentException("no canonical form for " + v.getClass().getName());
    }
  }

  private static void writeNode(JsonNode n, StringBuilder sb) {
    if (n.isObject()) {
      TreeMap<String, Object> sorted = new TreeMap<>();
      for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        if (!e.getValue().isNull()) sorted.put(e.getKey(), e.getValue());
      }
      object(sorted, sb);
    } else if (n.isArray()) {
      sb.append('[');
      for (int i = 0; i < n.size(); i++) {
        if (i > 0) sb.append(',');
        writeNode(n.get(i), sb);
      }
      sb.append(']');
    } else if (n.isNumber()) {
      number(n.numberValue(), sb);
    } else if (n.isBoolean()) {
      sb.append(n.booleanValue() ? "true" : "false");
    } else if (n.isNull() || n.isMissingNode()) {
      sb.append("null");
    } else if (n.isBinary()) {
      string(n.asText(), sb);
    } else {
      string(n.textValue() != null ? n.textValue() : n.asText(), sb);
    }
  }

  private static void object(TreeMap<String, Object> fields, StringBuilder sb) {
    sb.append('{');
    boolean first = true;
    for (Map.Entry<String, Object> e : fields.entrySet()) {
      if (!first) sb.append(',');
      first = false;
      string(e.getKey(), sb);
      sb.append(':');
      write(e.getValue(), sb);
    }
    sb.append('}');
  }

  private static void number(Number n, StringBuilder sb) {
    BigDecimal d;
    if (n instanceof BigDecimal b) {
      d = b;
    } else if (n instanceof BigInteger b) {
      d = new BigDecimal(b);
    } else if (n instanceof Double || n instanceof Float) {
      double x = n.doubleValue();
      if (Double.isNaN(x) || Double.isInfinite(x)) {
        string(Double.isNaN(x) ? "NaN" : x > 0 ? "Infinity" : "-Infinity", sb);
        return;
      }
      d = new BigDecimal(x);
    } else {
      d = BigDecimal.valueOf(n.longValue());
    }
    sb.append(d.signum() == 0 ? "0" : d.stripTrailingZeros().toPlainString());
  }

  private static void string(String s, StringBuilder sb) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        sb.append('\\').append(c);
      } else if (c < 0x20) {
        sb.append("\\u00").append(Character.forDigit(c >> 4, 16)).append(Character.forDigit(c & 0xf, 16));
      } else {
        sb.append(c);
      }
    }
    sb.append('"');
  }
}
