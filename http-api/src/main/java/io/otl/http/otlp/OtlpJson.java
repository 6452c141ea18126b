package io.otl.http.otlp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.otl.http.BadRequest;
import io.otl.wire.StrictDocument;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The {@code application/json} encoding of OTLP/HTTP traces (the OTLP JSON mapping: lowerCamelCase
 * keys, or the proto's snake_case field names, hex trace and span ids, enums as integers (a status code also by its name), 64-bit integers as
 * strings or numbers). Unknown
 * fields are ignored, as the specification asks of receivers; the JSON itself must be strict.
 */
final class OtlpJson {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private OtlpJson() {}

  static List<OtlpSpan> decode(byte[] body) {
    JsonNode root;
    try {
      // Strict (docs/http-edge.md): with "last wins" a resourceSpans sent twice, or a second
      // document after the first, lost spans while the exporter was told they were taken.
      root = StrictDocument.read(body);
    } catch (IOException e) {
      throw invalid("the body is not valid JSON: " + io.otl.wire.JsonParseProblem.describe(e));
    }
    if (root == null || !root.isObject()) throw invalid("the body must be a JSON ExportTraceServiceRequest object");
    camelCaseKeys(root, "");
    List<OtlpSpan> out = new ArrayList<>();
    JsonNode resourceSpans = array(root, "resourceSpans", "");
    for (int r = 0; r < resourceSpans.size(); r++) {
      String rw = "resourceSpans[" + r + "]";
      JsonNode rs = object(resourceSpans.get(r), rw);
      JsonNode res = rs.get("resource");
      Map<String, Object> resource = res == null || res.isNull() ? Map.of()
          : attributes(object(res, rw + ".resource"), rw + ".resource");
      JsonNode scopeSpans = array(rs, "scopeSpans", rw);
      for (int s = 0; s < scopeSpans.size(); s++) {
        String sw = rw + ".scopeSpans[" + s + "]";
        JsonNode spans = array(object(scopeSpans.get(s), sw), "spans", sw);
        for (int i = 0; i < spans.size(); i++) out.add(span(object(spans.get(i), sw + ".spans[" + i + "]"),
            sw + ".spans[" + i + "]", resource));
      }
    }
    return out;
  }

  /**
   * Renames the proto's own field names ({@code resource_spans}, {@code trace_id}, {@code string_value}
   * …) to the lowerCamelCase of the OTLP JSON mapping, in place. A protobuf JSON printer writes them
   * when told to keep field names (Python's {@code preserving_proto_field_name=True}), and the
   * Collector's receiver takes both; ignored here as unknown fields, such a request was answered 200
   * with nothing stored. OTLP JSON has no object keys of the user's (attributes are key/value pairs),
   * so every key is a field name. A field under both names is a 400, as any field sent twice.
   */
  private static void camelCaseKeys(JsonNode n, String where) {
    if (n.isArray()) {
      for (int i = 0; i < n.size(); i++) camelCaseKeys(n.get(i), where + "[" + i + "]");
      return;
    }
    if (!n.isObject()) return;
    ObjectNode o = (ObjectNode) n;
    List<String> snake = new ArrayList<>();
    o.fieldNames().forEachRemaining(k -> {
      if (k.indexOf('_') > 0) snake.add(k);
    });
    for (String k : snake) {
      String camel = camel(k);
      if (o.has(camel)) throw invalid(prefix(where) + camel + " is sent twice, also as " + k);
      o.set(camel, o.remove(k));
    }
    o.fields().forEachRemaining(e -> camelCaseKeys(e.getValue(), prefix(where) + e.getKey()));
  }

  private static String camel(String snake) {
    StringBuilder b = new StringBuilder(snake.length());
    boolean up = false;
    for (char c : snake.toCharArray()) {
      if (c == '_') {
        up = true;
      } else {
        b.append(up ? Character.toUpperCase(c) : c);
        up = false;
      }
    }
    return b.toString();
  }

  private static OtlpSpan span(JsonNode s, String where, Map<String, Object> resource) {
    List<OtlpSpan.Event> events = new ArrayList<>();
    JsonNode evs = array(s, "events", where);
    for (int i = 0; i < evs.size(); i++) {
      String ew = where + ".events[" + i + "]";
      JsonNode e = object(evs.get(i), ew);
      events.add(new OtlpSpan.Event(string(e, "name", ew), uint64(e, "timeUnixNano", ew), attributes(e, ew)));
    }
    JsonNode status = s.get("status");
    int code = 0;
    String message = "";
    if (status != null && !status.isNull()) {
      object(status, where + ".status");
      code = statusCode(status, where + ".status");
      message = string(status, "message", where + ".status");
    }
    return new OtlpSpan(id(s, "traceId", where, 16), id(s, "spanId", where, 8), id(s, "parentSpanId", where, 8),
        string(s, "name", where), uint64(s, "startTimeUnixNano", where), uint64(s, "endTimeUnixNano", where),
        attributes(s, where), events, code, message, resource);
  }

  /**
   * {@code status.code} as OTLP writes it (an integer), or as the protobuf JSON mapping writes an enum
   * ({@code "STATUS_CODE_ERROR"}: Python's {@code json_format.MessageToJson}, Java's
   * {@code JsonFormat.printer()}), which the Collector's receiver takes too. It was a 400 here, so a
   * request built with those tools lost all its spans over a status it only uses to tell failures.
   */
  private static int statusCode(JsonNode status, String where) {
    JsonNode n = status.get("code");
    if (n != null && n.isTextual()) {
      switch (n.textValue()) {
        case "STATUS_CODE_UNSET" -> {
          return 0;
        }
        case "STATUS_CODE_OK" -> {
          return 1;
        }
        case "STATUS_CODE_ERROR" -> {
          return 2;
        }
        default -> {
          // a decimal string, or the error of int64 below
        }
      }
    }
    return (int) integer(status, "code", where, true, "an integer");
  }

  private static Map<String, Object> attributes(JsonNode owner, String where) {
    Map<String, Object> out = new LinkedHashMap<>();
    JsonNode kvs = array(owner, "attributes", where);
    for (int i = 0; i < kvs.size(); i++) {
      String kw = where + ".attributes[" + i + "]";
      JsonNode kv = object(kvs.get(i), kw);
      Object v = value(kv.get("value"), kw + ".value");
      if (v != null) out.put(string(kv, "key", kw), v);
    }
    return out;
  }

  private static Object value(JsonNode v, String where) {
    if (v == null || v.isNull()) return null;
    object(v, where);
    if (v.has("stringValue")) return string(v, "stringValue", where);
    if (v.has("boolValue")) {
      if (!v.get("boolValue").isBoolean()) throw invalid(where + ".boolValue must be true or false");
      return v.get("boolValue").booleanValue();
    }
    if (v.has("intValue")) return int64(v, "intValue", where);
    if (v.has("doubleValue")) {
      JsonNode d = v.get("doubleValue");
      if (d.isNumber()) return d.doubleValue();
      try {
        return Double.parseDouble(d.asText());
      } catch (NumberFormatException e) {
        throw invalid(where + ".doubleValue is not a number");
      }
    }
    if (v.has("arrayValue")) {
      List<Object> list = new ArrayList<>();
      JsonNode values = array(object(v.get("arrayValue"), where + ".arrayValue"), "values", where + ".arrayValue");
      for (int i = 0; i < values.size(); i++) list.add(value(values.get(i), where + ".arrayValue.values[" + i + "]"));
      return list;
    }
    if (v.has("kvlistValue")) return attributesOf(object(v.get("kvlistValue"), where + ".kvlistValue"),
        where + ".kvlistValue");
    return null;
  }

  private static Map<String, Object> attributesOf(JsonNode kvlist, String where) {
    JsonNode values = kvlist.get("values");
    ObjectNode wrapper = MAPPER.createObjectNode();
    if (values != null) wrapper.set("attributes", values);
    return attributes(wrapper, where);
  }

  private static String id(JsonNode owner, String field, String where, int bytes) {
    String hex = string(owner, field, where);
    if (hex.isEmpty()) return "";
    // what was sent is not repeated: it may be anything (a phone number as likely as a typo)
    String expected = where + "." + field + " must be " + bytes * 2 + " hex digits";
    if (hex.length() != bytes * 2) {
      throw invalid(expected + " (it has " + hex.length() + " characters)" + base64Hint(hex, bytes));
    }
    try {
      HexFormat.of().parseHex(hex);
    } catch (IllegalArgumentException e) {
      throw invalid(expected + " (it has other characters)");
    }
    return hex.toLowerCase(Locale.ROOT);
  }

  /**
   * Protobuf's own JSON mapping (Python's {@code json_format.MessageToJson}, Go's {@code protojson}, the only
   * way to OTLP/JSON from the Python SDK, which exports protobuf alone) writes ids as base64, which OTLP/JSON
   * does not: the bare length told such a user nothing (trial t140).
   */
  private static String base64Hint(String id, int bytes) {
    // Both printers pad; unpadded, a phone number or a hex id a few digits short would decode too.
    if (id.length() != 4 * ((bytes + 2) / 3) || !id.endsWith("=")) return "";
    try {
      if (Base64.getDecoder().decode(id).length != bytes) return "";
    } catch (IllegalArgumentException e) {
      return "";
    }
    return ": it reads as base64, as protobuf's JSON mapping writes bytes (json_format.MessageToJson, protojson);"
        + " OTLP/JSON writes trace and span ids as hex, or send protobuf (application/x-protobuf)";
  }

  private static JsonNode object(JsonNode n, String where) {
    if (n == null || !n.isObject()) throw invalid(where + " must be a JSON object");
    return n;
  }

  private static JsonNode array(JsonNode owner, String field, String where) {
    JsonNode n = owner.get(field);
    if (n == null || n.isNull()) return MAPPER.createArrayNode();
    if (!n.isArray()) throw invalid(prefix(where) + field + " must be an array");
    return n;
  }

  private static String string(JsonNode owner, String field, String where) {
    JsonNode n = owner.get(field);
    if (n == null || n.isNull()) return "";
    if (!n.isTextual()) throw invalid(prefix(where) + field + " must be a string");
    return n.textValue();
  }

  /** A signed int64 (an attribute's {@code intValue}): "-1" is as valid as -1. */
  private static long int64(JsonNode owner, String field, String where) {
    return integer(owner, field, where, true, "a signed 64-bit integer");
  }

  /** A fixed64 (the span and event times): unsigned, so a decimal string up to 2^64-1. */
  private static long uint64(JsonNode owner, String field, String where) {
    return integer(owner, field, where, false, "an unsigned 64-bit integer");
  }

  private static long integer(JsonNode owner, String field, String where, boolean signed, String what) {
    JsonNode n = owner.get(field);
    if (n == null || n.isNull()) return 0;
    if (n.isIntegralNumber() && n.canConvertToLong()) return n.longValue();
    if (n.isTextual()) {
      try {
        // The proto3 JSON mapping writes every 64-bit integer as a decimal string, negative ones
        // too: read unsigned, an intValue of "-1" (vLLM's top_k when off) was a 400 that lost the
        // exporter's whole batch, while the same -1 as a JSON number passed.
        return signed ? Long.parseLong(n.textValue()) : Long.parseUnsignedLong(n.textValue());
      } catch (NumberFormatException e) {
        // fall through to the error below
      }
    }
    throw invalid(prefix(where) + field + " must be " + what + " (a number or a decimal string)");
  }

  private static String prefix(String where) {
    return where.isEmpty() ? "" : where + ".";
  }

  private static BadRequest invalid(String message) {
    return new BadRequest(400, "invalid_otlp", message);
  }

  static byte[] response(long rejected, String message) {
    ObjectNode root = MAPPER.createObjectNode();
    if (rejected > 0 || !message.isEmpty()) {
      ObjectNode partial = root.putObject("partialSuccess");
      partial.put("rejectedSpans", String.valueOf(rejected));
      partial.put("errorMessage", message);
    }
    try {
      return MAPPER.writeValueAsBytes(root);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
