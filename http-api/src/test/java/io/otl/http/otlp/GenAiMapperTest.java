package io.otl.http.otlp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.session.SessionInput;
import io.otl.http.BadRequest;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The GenAI mapping on OTLP JSON bodies written as the specification's examples are: the older
 * per-message span events, inheritance of the session from a parent span, several sessions in
 * one trace, and the decoding errors that become 400s.
 */
class GenAiMapperTest {
  private static final String TRACE = "5b8efff798038103d269b633813fc60c";

  private static String attr(String key, String value) {
    return "{\"key\":\"" + key + "\",\"value\":{\"stringValue\":" + value + "}}";
  }

  private static String span(String id, String parent, String attrs, String events, int status) {
    return "{\"traceId\":\"" + TRACE + "\",\"spanId\":\"" + id + "\",\"parentSpanId\":\"" + parent + "\","
        + "\"name\":\"s\",\"startTimeUnixNano\":\"1700000000000000000\",\"endTimeUnixNano\":1700000000250000000,"
        + "\"attributes\":[" + attrs + "],\"events\":[" + events + "],\"status\":{\"code\":" + status + "}}";
  }

  private static List<OtlpSpan> decode(String spans) {
    String body = "{\"resourceSpans\":[{\"resource\":{\"attributes\":[" + attr("service.name", "\"svc\"") + "]},"
        + "\"scopeSpans\":[{\"scope\":{\"name\":\"x\"},\"spans\":[" + spans + "]}]}]}";
    return OtlpJson.decode(body.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * What the spans of one session became, after the start every session batch opens with: it names
   * OpenTelemetry as the session's source, as the gateway's and the AgentScope hook's sessions name theirs.
   */
  private static List<SessionInput> mapped(GenAiMapper.SessionBatch batch) {
    SessionInput.Start start = (SessionInput.Start) batch.inputs().get(0);
    assertEquals(GenAiMapper.START_ID, start.eventId());
    assertEquals(java.util.Map.of("source", "otel"), start.metadata());
    return batch.inputs().subList(1, batch.inputs().size());
  }

  @Test
  void olderMessageEventsAndInheritedSessions() {
    String agentA = span("0000000000000001", "", attr("gen_ai.operation.name", "\"invoke_agent\"") + ","
        + attr("gen_ai.conversation.id", "\"conv-a\""), "", 0);
    String chatA = span("0000000000000002", "0000000000000001", attr("gen_ai.operation.name", "\"chat\"") + ","
        + attr("gen_ai.response.id", "\"r-9\""),
        "{\"name\":\"gen_ai.user.message\",\"attributes\":[" + attr("content", "\"hello\"") + "]},"
            + "{\"name\":\"gen_ai.choice\",\"attributes\":["
            + attr("message", "\"{\\\"role\\\":\\\"assistant\\\",\\\"content\\\":\\\"hi there\\\"}\"") + "]}", 0);
    String toolB = span("0000000000000003", "", attr("gen_ai.operation.name", "\"execute_tool\"") + ","
        + attr("gen_ai.agent.name", "\"Lookup Agent\"") + ","
        + attr("gen_ai.conversation.id", "\"conv-b\"") + "," + attr("gen_ai.tool.name", "\"lookup\"")
        + "," + attr("gen_ai.tool.call.arguments", "\"plain text\""), "", 2);
    String http = span("0000000000000004", "", attr("http.request.method", "\"GET\""), "", 0);

    GenAiMapper.Plan plan = GenAiMapper.map(decode(String.join(",", agentA, chatA, toolB, http)));

    assertEquals(1, plan.ignored());
    assertEquals(0, plan.refused());
    assertEquals(2, plan.sessions().size(), "one trace, two sessions");
    GenAiMapper.SessionBatch a = plan.sessions().stream().filter(s -> s.sessionId().equals("conv-a")).findFirst()
        .orElseThrow();
    assertEquals("svc", a.agentId(), "no gen_ai.agent.*: the resource's service.name");
    assertTrue(a.agentFromResource(), "which names a new session's agent only (OtlpLaterBatchAgentTest)");
    assertEquals(2, a.spans());
    List<SessionInput.Message> messages = mapped(a).stream().filter(SessionInput.Message.class::isInstance)
        .map(SessionInput.Message.class::cast).toList();
    assertEquals(List.of("user", "assistant"), messages.stream().map(SessionInput.Message::role).toList());
    assertEquals("hi there", messages.get(1).content());
    assertEquals("r-9", messages.get(1).msgId());
    assertEquals(250L, messages.get(1).latencyMs());
    SessionInput.ToolCall tool = (SessionInput.ToolCall) mapped(plan.sessions().stream()
        .filter(s -> s.sessionId().equals("conv-b")).findFirst().orElseThrow()).get(0);
    assertEquals("otlp:0000000000000003", tool.eventId(), "the span id is the event id");
    assertEquals(Boolean.FALSE, tool.success());
    assertEquals("Lookup-Agent", plan.sessions().stream().filter(s -> s.sessionId().equals("conv-b")).findFirst()
        .orElseThrow().agentId(), "an agent name with a space still names the agent");
    assertEquals("plain text", tool.input().asText());
  }

  /**
   * The conventions mark a failed operation with {@code error.type}, the status left UNSET by some
   * instrumentations: a chat span so marked was a failed call, but a tool or agent span so marked
   * was stored as a success (review). Every kind of span now reads failure the same way.
   */
  @Test
  void anErrorTypeAloneMarksAToolOrAgentSpanFailed() {
    String tool = span("0000000000000011", "", attr("gen_ai.operation.name", "\"execute_tool\"") + ","
        + attr("gen_ai.conversation.id", "\"conv-e\"") + "," + attr("gen_ai.tool.name", "\"lookup\"") + ","
        + attr("error.type", "\"TimeoutError\""), "", 0);
    String agent = span("0000000000000012", "", attr("gen_ai.operation.name", "\"invoke_agent\"") + ","
        + attr("gen_ai.conversation.id", "\"conv-e\"") + "," + attr("error.type", "\"Cancelled\""), "", 0);
    List<SessionInput> inputs = mapped(GenAiMapper.map(decode(tool + "," + agent)).sessions().get(0));
    SessionInput.ToolCall call = inputs.stream().filter(SessionInput.ToolCall.class::isInstance)
        .map(SessionInput.ToolCall.class::cast).findFirst().orElseThrow();
    assertEquals(Boolean.FALSE, call.success());
    assertEquals("TimeoutError", call.output().path("error").asText());
    SessionInput.Reasoning step = inputs.stream().filter(SessionInput.Reasoning.class::isInstance)
        .map(SessionInput.Reasoning.class::cast).findFirst().orElseThrow();
    assertEquals("failed: Cancelled", step.observation());
  }

  /**
   * The current conventions put the system prompt in {@code gen_ai.system_instructions}, beside
   * {@code gen_ai.input.messages}: it was dropped, so the session had no system prompt. It is the
   * conversation's first message, once, under the same id in every turn.
   */
  @Test
  void systemInstructionsBecomeTheFirstMessage() {
    String chat1 = span("0000000000000011", "", attr("gen_ai.operation.name", "\"chat\"") + ","
        + attr("gen_ai.conversation.id", "\"conv-sys\"") + ","
        + attr("gen_ai.system_instructions", "\"[{\\\"type\\\":\\\"text\\\",\\\"content\\\":\\\"Be brief.\\\"}]\"") + ","
        + attr("gen_ai.input.messages", "\"[{\\\"role\\\":\\\"user\\\",\\\"parts\\\":[{\\\"type\\\":\\\"text\\\",\\\"content\\\":\\\"hi\\\"}]}]\""),
        "", 0);
    String chat2 = span("0000000000000012", "", attr("gen_ai.operation.name", "\"chat\"") + ","
        + attr("gen_ai.conversation.id", "\"conv-sys\"") + ","
        + attr("gen_ai.system_instructions", "\"Be brief.\"") + ","
        + attr("gen_ai.input.messages", "\"[{\\\"role\\\":\\\"user\\\",\\\"content\\\":\\\"hi\\\"},"
            + "{\\\"role\\\":\\\"assistant\\\",\\\"content\\\":\\\"hello\\\"}]\""), "", 0);

    GenAiMapper.Plan plan = GenAiMapper.map(decode(String.join(",", chat1, chat2)));

    assertEquals(0, plan.refused(), plan.problems().toString());
    List<SessionInput.Message> messages = mapped(plan.sessions().get(0)).stream()
        .filter(SessionInput.Message.class::isInstance).map(SessionInput.Message.class::cast).toList();
    assertEquals(List.of("system", "user", "assistant"), messages.stream().map(SessionInput.Message::role).toList(),
        "the system prompt once, as JSON parts and as plain text alike");
    assertEquals("Be brief.", messages.get(0).content());
  }

  @Test
  void openLlmetryIndexedAttributes() {
    String chat = span("00000000000000b1", "", attr("llm.request.type", "\"chat\"") + ","
        + attr("session.id", "\"conv-c\"") + "," + attr("gen_ai.prompt.0.role", "\"system\"") + ","
        + attr("gen_ai.prompt.0.content", "\"be brief\"") + "," + attr("gen_ai.prompt.1.role", "\"user\"") + ","
        + attr("gen_ai.prompt.1.content", "\"2+2?\"") + "," + attr("gen_ai.completion.0.role", "\"assistant\"") + ","
        + attr("gen_ai.completion.0.content", "\"4\""), "", 0);
    GenAiMapper.Plan plan = GenAiMapper.map(decode(chat));
    List<SessionInput> inputs = mapped(plan.sessions().get(0));
    assertEquals("conv-c", plan.sessions().get(0).sessionId(), "session.id when gen_ai.conversation.id is absent");
    assertEquals(List.of("system", "user", "assistant"),
        inputs.stream().map(i -> ((SessionInput.Message) i).role()).toList());
    assertEquals("4", ((SessionInput.Message) inputs.get(2)).content());
  }

  @Test
  void openInferenceSpans() {
    String llm = span("00000000000000c1", "", attr("openinference.span.kind", "\"LLM\"") + ","
        + attr("session.id", "\"conv-d\"") + "," + attr("llm.input_messages.0.message.role", "\"user\"") + ","
        + attr("llm.input_messages.0.message.content", "\"hi\"") + ","
        + attr("llm.output_messages.0.message.role", "\"assistant\"") + ","
        + attr("llm.output_messages.0.message.content", "\"hello\""), "", 0);
    String tool = span("00000000000000c2", "00000000000000c1", attr("openinference.span.kind", "\"TOOL\"") + ","
        + attr("tool.name", "\"calc\"") + "," + attr("input.value", "\"{\\\"x\\\":1}\"") + ","
        + attr("output.value", "\"2\""), "", 0);
    String chain = span("00000000000000c3", "", attr("openinference.span.kind", "\"CHAIN\""), "", 0);
    GenAiMapper.Plan plan = GenAiMapper.map(decode(String.join(",", llm, tool, chain)));
    assertEquals(1, plan.ignored(), "a CHAIN span is not mapped");
    List<SessionInput> inputs = mapped(plan.sessions().get(0));
    assertEquals(3, inputs.size());
    assertEquals("hello", ((SessionInput.Message) inputs.get(1)).content());
    SessionInput.ToolCall call = (SessionInput.ToolCall) inputs.get(2);
    assertEquals("calc", call.toolName());
    assertEquals(1, call.input().get("x").asInt());
    assertEquals("2", call.output().asText());
  }

  @Test
  void spansThatCannotBeMappedAreRefusedOneByOne() {
    String noSession = span("00000000000000a1", "", attr("gen_ai.operation.name", "\"chat\""), "", 0);
    String noToolName = span("00000000000000a2", "", attr("gen_ai.operation.name", "\"execute_tool\"") + ","
        + attr("gen_ai.conversation.id", "\"c\""), "", 0);
    String badMessages = span("00000000000000a3", "", attr("gen_ai.operation.name", "\"chat\"") + ","
        + attr("gen_ai.conversation.id", "\"c\"") + "," + attr("gen_ai.input.messages", "\"not json\""), "", 0);
    GenAiMapper.Plan plan = GenAiMapper.map(decode(String.join(",", noSession, noToolName, badMessages)));
    assertEquals(3, plan.refused());
    assertTrue(plan.sessions().isEmpty());
    assertTrue(String.join(" ", plan.problems()).contains("gen_ai.tool.name"), plan.problems().toString());
  }

  /**
   * A span refused for its session id named neither the span nor its operation ({@code gen_ai.conversation.id
   * may contain only the characters …}), unlike every other refusal in {@code error_message} and the log line:
   * in a batch of hundreds, the user could not tell which span (trial trial-otel). The id itself is not repeated
   * (it may hold personal data).
   */
  @Test
  void aSpanRefusedForItsSessionIdIsNamed() {
    String badChars = span("00000000000000b1", "", attr("gen_ai.operation.name", "\"chat\"") + ","
        + attr("gen_ai.conversation.id", "\"bad id!\"") + "," + attr("gen_ai.agent.name", "\"a\"") + ","
        + attr("gen_ai.input.messages", "\"[{\\\"role\\\":\\\"user\\\",\\\"content\\\":\\\"q\\\"}]\""), "", 0);
    String email = span("00000000000000b2", "", attr("gen_ai.operation.name", "\"execute_tool\"") + ","
        + attr("session.id", "\"s-13812345678\"") + "," + attr("gen_ai.tool.name", "\"t\""), "", 0);
    GenAiMapper.Plan plan = GenAiMapper.map(decode(String.join(",", badChars, email)));
    assertEquals(2, plan.refused());
    assertEquals(List.of(
        "span 00000000000000b1 (chat): gen_ai.conversation.id may contain only the characters [A-Za-z0-9._:-]",
        "span 00000000000000b2 (execute_tool): session.id looks like a phone number; use an opaque id"),
        plan.problems());
    assertTrue(plan.problems().stream().noneMatch(p -> p.contains("13812345678") || p.contains("bad id!")));
  }

  @Test
  void malformedBodiesAreBadRequests() {
    assertThrows(BadRequest.class, () -> decode(span("xyz", "", "", "", 0)));
    assertThrows(BadRequest.class, () -> OtlpJson.decode("[]".getBytes(StandardCharsets.UTF_8)));
    assertThrows(BadRequest.class, () -> OtlpJson.decode("{\"resourceSpans\":{}}".getBytes(StandardCharsets.UTF_8)));
    assertThrows(BadRequest.class, () -> decode("{\"spanId\":\"0000000000000001\",\"startTimeUnixNano\":\"soon\"}"));
    assertThrows(BadRequest.class, () -> OtlpProtobuf.decode(new byte[] {0x0a, 0x7f, 0x01}));
  }

  /**
   * OpenTelemetry's sessions carried no {@code metadata.source} (the gateway's say {@code gateway}, the
   * AgentScope hook's {@code agentscope}): each session now starts with {@code source = otel}, timed at
   * its earliest span, under one id in every request so that a re-sent batch stores it once.
   */
  @Test
  void eachSessionStartsWithOtelAsItsSourceAtItsEarliestSpan() {
    String late = "{\"traceId\":\"" + TRACE + "\",\"spanId\":\"00000000000000d2\",\"parentSpanId\":\"\","
        + "\"name\":\"s\",\"startTimeUnixNano\":\"1700000005000000000\",\"endTimeUnixNano\":1700000006000000000,"
        + "\"attributes\":[" + attr("gen_ai.operation.name", "\"execute_tool\"") + ","
        + attr("gen_ai.conversation.id", "\"conv-e\"") + "," + attr("gen_ai.tool.name", "\"t\"") + "],"
        + "\"status\":{\"code\":0}}";
    String early = span("00000000000000d1", "", attr("gen_ai.operation.name", "\"invoke_agent\"") + ","
        + attr("gen_ai.conversation.id", "\"conv-e\""), "", 0);
    String other = span("00000000000000d3", "", attr("gen_ai.operation.name", "\"invoke_agent\"") + ","
        + attr("gen_ai.conversation.id", "\"conv-f\""), "", 0);

    GenAiMapper.Plan plan = GenAiMapper.map(decode(String.join(",", late, early, other)));

    assertEquals(2, plan.sessions().size());
    for (GenAiMapper.SessionBatch batch : plan.sessions()) {
      SessionInput.Start start = (SessionInput.Start) batch.inputs().get(0);
      assertEquals(new SessionInput.Start("otlp:start", java.time.Instant.ofEpochSecond(1_700_000_000L), null, null,
          java.util.Map.of("source", "otel")), start, batch.sessionId());
      assertEquals(1, batch.inputs().stream().filter(SessionInput.Start.class::isInstance).count(), "one start");
    }
    assertEquals(2, mapped(plan.sessions().stream().filter(s -> s.sessionId().equals("conv-e")).findFirst()
        .orElseThrow()).size(), "the start comes in addition to the spans' inputs");
  }

  /** A JSON body that is not JSON was answered with Jackson's words, which quote the token: client data. */
  @Test
  void aBodyThatIsNotJsonIsRefusedWithoutEchoingItsTokens() {
    BadRequest refused = assertThrows(BadRequest.class,
        () -> OtlpJson.decode("{\"resourceSpans\":[mobile13890123456]}".getBytes(StandardCharsets.UTF_8)));
    assertTrue(refused.getMessage().startsWith("the body is not valid JSON: Unrecognized token '*'"),
        refused.getMessage());
  }

  /**
   * The protobuf JSON mapping writes enums by name ({@code MessageToJson}, {@code JsonFormat.printer()}):
   * a status code by name was a 400 that lost every span of the request. The names are read as their
   * numbers; an unknown name is still refused.
   */
  @Test
  void aStatusCodeMayBeSentByItsEnumName() {
    String[] names = {"STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR", "2"};
    int[] codes = {0, 1, 2, 2};
    for (int i = 0; i < names.length; i++) {
      String body = span("00000000000000e1", "", attr("gen_ai.operation.name", "\"chat\""), "", 0)
          .replace("\"status\":{\"code\":0}", "\"status\":{\"code\":\"" + names[i] + "\",\"message\":\"m\"}");
      OtlpSpan decoded = decode(body).get(0);
      assertEquals(codes[i], decoded.statusCode(), names[i]);
      assertEquals("m", decoded.statusMessage());
    }
    String unknown = span("00000000000000e2", "", "", "", 0).replace("\"code\":0", "\"code\":\"STATUS_CODE_MAYBE\"");
    BadRequest refused = assertThrows(BadRequest.class, () -> decode(unknown));
    assertTrue(refused.getMessage().endsWith("status.code must be an integer (a number or a decimal string)"),
        refused.getMessage());
  }

  @Test
  void reasoningPartsBecomeAStepBeforeTheAnswerNotPartOfIt() throws Exception {
    com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
    String input = "[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"content\":\"2+2?\"}]}]";
    String output = "[{\"role\":\"assistant\",\"parts\":[{\"type\":\"reasoning\",\"content\":\"add them\"},"
        + "{\"type\":\"text\",\"content\":\"4\"}],\"finish_reason\":\"stop\"}]";
    String chat = span("0000000000000005", "", attr("gen_ai.operation.name", "\"chat\"") + ","
        + attr("gen_ai.conversation.id", "\"conv-r\"") + ","
        + attr("gen_ai.input.messages", json.writeValueAsString(input)) + ","
        + attr("gen_ai.output.messages", json.writeValueAsString(output)), "", 0);

    List<SessionInput> inputs = mapped(GenAiMapper.map(decode(chat)).sessions().get(0));

    assertEquals(List.of("message", "reasoning", "message"), inputs.stream().map(SessionInput::type).toList());
    SessionInput.Reasoning thinking = (SessionInput.Reasoning) inputs.get(1);
    assertEquals("add them", thinking.thought());
    assertEquals("4", ((SessionInput.Message) inputs.get(2)).content(), "the answer alone, without the reasoning");
  }

  /** An empty {@code gen_ai.response.id} names no response: the answer was stored with msgId "". */
  @Test
  void anEmptyResponseIdIsNoMsgId() throws Exception {
    com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
    String output = "[{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"content\":\"4\"}]}]";
    String chat = span("0000000000000006", "", attr("gen_ai.operation.name", "\"chat\"") + ","
        + attr("gen_ai.conversation.id", "\"conv-e\"") + "," + attr("gen_ai.response.id", "\"\"") + ","
        + attr("gen_ai.output.messages", json.writeValueAsString(output)), "", 0);

    SessionInput.Message answer = (SessionInput.Message) mapped(GenAiMapper.map(decode(chat)).sessions().get(0)).get(0);

    assertEquals("4", answer.content());
    assertEquals(null, answer.msgId());
  }
}
