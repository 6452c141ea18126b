package io.otl.node.otlp;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.opentelemetry.api.baggage.Baggage;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.KeyValue;
import io.opentelemetry.api.common.Value;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.logs.LogRecordProcessor;
import io.opentelemetry.sdk.logs.ReadWriteLogRecord;
import io.opentelemetry.sdk.logs.data.LogRecordData;
import io.opentelemetry.sdk.trace.ReadWriteSpan;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SpanProcessor;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

// The two processors of docs/connect-opentelemetry.md's section on OpenTelemetry's openai-java
// instrumentation, verbatim between the markers: OtlpOpenAiJavaInstrumentationTest checks the page
// still shows these lines and runs them against a node. The same code fed the captured bridged.pb.
// [example]
/** Copies the GenAI events the instrumentation emits as log records onto their chat span. */
final class GenAiEventsToSpan implements LogRecordProcessor {
  private static final AttributeKey<String> EVENT_NAME = AttributeKey.stringKey("event.name");
  private static final AttributeKey<String> CONTENT = AttributeKey.stringKey("gen_ai.event.content");
  private static final ObjectMapper JSON = new ObjectMapper();

  @Override
  public void onEmit(Context context, ReadWriteLogRecord log) {
    LogRecordData data = log.toLogRecordData();
    String name = data.getEventName() != null ? data.getEventName() : data.getAttributes().get(EVENT_NAME);
    if (name == null || !name.startsWith("gen_ai.") || data.getBodyValue() == null) return;
    try {
      Span.fromContext(context).addEvent(name, Attributes.of(CONTENT, JSON.writeValueAsString(plain(data.getBodyValue()))));
    } catch (JsonProcessingException e) {
      // a body Jackson cannot write: that message is left out, the agent goes on
    }
  }

  @SuppressWarnings("unchecked")
  private static Object plain(Value<?> v) {
    return switch (v.getType()) {
      case ARRAY -> ((List<Value<?>>) v.getValue()).stream().map(GenAiEventsToSpan::plain).toList();
      case KEY_VALUE_LIST -> {
        Map<String, Object> m = new LinkedHashMap<>();
        for (KeyValue kv : (List<KeyValue>) v.getValue()) m.put(kv.getKey(), plain(kv.getValue()));
        yield m;
      }
      default -> v.getValue();
    };
  }
}

/** Puts the run's conversation id and agent (from the baggage) on every span started in it, the instrumentation's too. */
final class RunFromBaggage implements SpanProcessor {
  @Override
  public void onStart(Context parent, ReadWriteSpan span) {
    for (String key : List.of("gen_ai.conversation.id", "gen_ai.agent.name")) {
      String value = Baggage.fromContext(parent).getEntryValue(key);
      if (value != null) span.setAttribute(key, value);
    }
  }

  @Override
  public boolean isStartRequired() {
    return true;
  }

  @Override
  public void onEnd(ReadableSpan span) {}

  @Override
  public boolean isEndRequired() {
    return false;
  }
}
// [/example]
