package io.otl.node.gateway;

import com.openai.core.JsonValue;
import com.openai.models.FunctionDefinition;
import com.openai.models.FunctionParameters;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionFunctionTool;
import java.util.Map;

/** The one tool of the scripted tool-call tests: its definition, as an agent sends it, and a model's call of it. */
final class WeatherTool {
  private WeatherTool() {}

  static final ChatCompletionFunctionTool DEFINITION = ChatCompletionFunctionTool.builder()
      .function(FunctionDefinition.builder().name("get_weather")
          .parameters(FunctionParameters.builder()
              .putAdditionalProperty("type", JsonValue.from("object"))
              .putAdditionalProperty("properties", JsonValue.from(Map.of("city", Map.of("type", "string"))))
              .build())
          .build())
      .build();

  /** A model server's whole answer that is only a call of the tool for {@code city}, with its usage. */
  static String callAnswer(String callId, String city) {
    return "{\"id\":\"chatcmpl-" + callId + "\",\"object\":\"chat.completion\",\"created\":1,\"model\":\"m\","
        + "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\""
        + callId + "\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\""
        + city + "\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}],"
        + "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":9,\"total_tokens\":14}}";
  }

  /** A conversation of session {@code sessionId} as an agent starts it: a system prompt, the question, the tool. */
  static ChatCompletionCreateParams.Builder conversation(String sessionId, String question) {
    return ChatCompletionCreateParams.builder().model("default")
        .addSystemMessage("Be brief.")
        .addUserMessage(question)
        .addTool(DEFINITION)
        .putAdditionalHeader("X-Session-Id", sessionId);
  }
}
