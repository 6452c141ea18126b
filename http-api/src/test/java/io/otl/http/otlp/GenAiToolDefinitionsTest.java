package io.otl.http.otlp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.core.session.SessionInput;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A chat span's {@code gen_ai.tool.definitions} becomes the session's metadata {@code tools} in the
 * OpenAI form the SFT export reads. It was not read: an OpenTelemetry session's SFT line had only
 * tools derived from the calls made, without descriptions, required fields or the tools not called.
 */
class GenAiToolDefinitionsTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String WEATHER = "{\"type\":\"function\",\"name\":\"get_weather\",\"description\":\"Weather of a city\","
      + "\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}}";
  private static final String NESTED = "{\"type\":\"function\",\"function\":{\"name\":\"get_time\",\"parameters\":{\"type\":\"object\"}}}";
  private static final String EXPECTED = "[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"description\":"
      + "\"Weather of a city\",\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},"
      + "\"required\":[\"city\"]}}},{\"type\":\"function\",\"function\":{\"name\":\"get_time\",\"parameters\":{\"type\":\"object\"}}}]";

  private static OtlpSpan chat(Object definitions, String output) {
    Map<String, Object> attributes = new java.util.HashMap<>();
    attributes.put("gen_ai.operation.name", "chat");
    attributes.put("gen_ai.conversation.id", "conv-tools");
    attributes.put("gen_ai.input.messages", "[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"content\":\"Weather in Oslo?\"}]}]");
    if (output != null) attributes.put("gen_ai.output.messages", output);
    if (definitions != null) attributes.put("gen_ai.tool.definitions", definitions);
    return new OtlpSpan("5b8efff798038103d269b633813fc60c", "0000000000000007", "", "chat", 1_700_000_000_000_000_000L,
        1_700_000_000_250_000_000L, attributes, List.of(), 0, null, Map.of("service.name", "svc"));
  }

  private static List<SessionInput.Start> starts(OtlpSpan span) {
    return GenAiMapper.map(List.of(span)).sessions().get(0).inputs().stream()
        .filter(SessionInput.Start.class::isInstance).map(SessionInput.Start.class::cast).toList();
  }

  @Test
  void theConventionsToolsAreStoredInTheOpenAiFormTheExportReads() throws Exception {
    String output = "[{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"content\":\"Sunny.\"}]}]";
    // a JSON string, as spans may carry it, with a tool of another type and one without a name left out
    String text = "[" + WEATHER + "," + NESTED + ",{\"type\":\"web_search\"},{\"type\":\"function\"}]";
    List<SessionInput.Start> fromText = starts(chat(text, output));
    assertEquals(2, fromText.size(), fromText.toString());
    assertEquals(GenAiMapper.START_ID, fromText.get(0).eventId());
    SessionInput.Start tools = fromText.get(1);
    assertEquals(JSON.readTree(EXPECTED), JSON.readTree(tools.metadata().get("tools")));

    // structured, as the conventions recommend on spans: the same tools, the same event id (a duplicate)
    Object structured = JSON.readValue("[" + WEATHER + "," + NESTED + "]", List.class);
    SessionInput.Start again = starts(chat(structured, output)).get(1);
    assertEquals(tools.eventId(), again.eventId());
    assertEquals(tools.metadata(), again.metadata());
  }

  @Test
  void toolsAloneAreNoTurnAndTextThatIsNotToolsIsNoTools() {
    OtlpSpan noMessages = chat("[" + WEATHER + "]", null);
    noMessages.attributes().remove("gen_ai.input.messages");
    GenAiMapper.Plan plan = GenAiMapper.map(List.of(noMessages));
    assertEquals(0, plan.sessions().size(), "content capture off: the span is ignored, tools or not");
    assertEquals(1, plan.ignored());
    assertEquals(0, GenAiToolDefinitions.openAiForm("not json").size());
    assertEquals(0, GenAiToolDefinitions.openAiForm("{\"type\":\"function\",\"name\":\"x\"}").size());
  }
}
