package io.otl.http.otlp;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import io.opentelemetry.proto.collector.trace.v1.ExportTracePartialSuccess;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import io.otl.http.BadRequest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The {@code application/x-protobuf} encoding of OTLP/HTTP traces. */
final class OtlpProtobuf {
  private static final HexFormat HEX = HexFormat.of();

  private OtlpProtobuf() {}

  static List<OtlpSpan> decode(byte[] body) {
    ExportTraceServiceRequest request;
    try {
      request = ExportTraceServiceRequest.parseFrom(body);
    } catch (InvalidProtocolBufferException e) {
      throw new BadRequest(400, "invalid_otlp", "the body is not a valid OTLP ExportTraceServiceRequest (protobuf): "
          + what(e) + " (a body in the OTLP JSON encoding needs Content-Type: application/json)");
    }
    List<OtlpSpan> out = new ArrayList<>();
    for (ResourceSpans rs : request.getResourceSpansList()) {
      Map<String, Object> resource = attributes(rs.hasResource() ? rs.getResource() : Resource.getDefaultInstance());
      for (ScopeSpans ss : rs.getScopeSpansList()) {
        for (Span s : ss.getSpansList()) {
          List<OtlpSpan.Event> events = new ArrayList<>(s.getEventsCount());
          for (Span.Event e : s.getEventsList()) {
            events.add(new OtlpSpan.Event(e.getName(), e.getTimeUnixNano(), attributes(e.getAttributesList())));
          }
          out.add(new OtlpSpan(hex(s.getTraceId(), "traceId", 16), hex(s.getSpanId(), "spanId", 8),
              hex(s.getParentSpanId(), "parentSpanId", 8), s.getName(),
              s.getStartTimeUnixNano(), s.getEndTimeUnixNano(), attributes(s.getAttributesList()), events,
              s.hasStatus() ? s.getStatus().getCodeValue() : 0, s.hasStatus() ? s.getStatus().getMessage() : "",
              resource));
        }
      }
    }
    return out;
  }

  /**
   * What was wrong, in our words: the parser's own ("Protocol message end-group tag did not match
   * expected tag.") named its internals, not the request, and told an exporter's user nothing.
   */
  private static String what(InvalidProtocolBufferException e) {
    String m = String.valueOf(e.getMessage());
    if (m.contains("input ended unexpectedly")) {
      return "it ends inside a field (the body is cut short, or a length inside it is wrong)";
    }
    if (m.contains("invalid UTF-8")) return "a string field holds bytes that are not UTF-8";
    if (m.contains("levels of nesting")) return "it is nested too deeply";
    return "its bytes are not protobuf fields of that message (a wrong tag, wire type or length)";
  }

  static byte[] response(long rejected, String message) {
    ExportTraceServiceResponse.Builder b = ExportTraceServiceResponse.newBuilder();
    if (rejected > 0 || !message.isEmpty()) {
      b.setPartialSuccess(ExportTracePartialSuccess.newBuilder().setRejectedSpans(rejected).setErrorMessage(message));
    }
    return b.build().toByteArray();
  }

  /** A {@code google.rpc.Status}, the body OTLP/HTTP gives an error answer to a protobuf request. */
  static byte[] status(int code, String message) {
    try {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      CodedOutputStream out = CodedOutputStream.newInstance(bytes);
      out.writeInt32(1, code);
      out.writeString(2, message);
      out.flush();
      return bytes.toByteArray();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** As the JSON encoding: empty (absent) or exactly {@code bytes} long; a 400 otherwise. */
  private static String hex(ByteString id, String field, int bytes) {
    if (id.isEmpty()) return "";
    if (id.size() != bytes) {
      throw new BadRequest(400, "invalid_otlp", "a span's " + field + " must be " + bytes + " bytes (it has "
          + id.size() + ")");
    }
    return HEX.formatHex(id.toByteArray());
  }

  private static Map<String, Object> attributes(Resource r) {
    return attributes(r.getAttributesList());
  }

  private static Map<String, Object> attributes(List<KeyValue> kvs) {
    Map<String, Object> out = new LinkedHashMap<>();
    for (KeyValue kv : kvs) {
      Object v = value(kv.getValue());
      if (v != null) out.put(kv.getKey(), v);
    }
    return out;
  }

  private static Object value(AnyValue v) {
    return switch (v.getValueCase()) {
      case STRING_VALUE -> v.getStringValue();
      case BOOL_VALUE -> v.getBoolValue();
      case INT_VALUE -> v.getIntValue();
      case DOUBLE_VALUE -> v.getDoubleValue();
      case ARRAY_VALUE -> {
        List<Object> list = new ArrayList<>();
        for (AnyValue e : v.getArrayValue().getValuesList()) list.add(value(e));
        yield list;
      }
      case KVLIST_VALUE -> attributes(v.getKvlistValue().getValuesList());
      default -> null;
    };
  }
}
