package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.StructuredChatCompletion;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The simulator (v0 on the embedded default) honours what a request asks of the answer's form, as a
 * model server does: structured outputs (the SDK's typed {@code responseFormat}, a JSON schema) and a
 * token limit (cut, finish reason {@code length}). It ignored both: the SDK could not read a structured
 * answer on the embedded default, and a cut answer never came (trial t79).
 */
class SimulatorAnswerShapeTest {
  private static final String AGENT = "shape-asker";
  private static GatewayTestNode gateway;
  private static OpenAIClient client;

  /** What the agent asks the model for, as its own Java type. */
  public static class Forecast {
    public String city;
    public int celsius;
    public boolean raining;
    public List<String> warnings;
  }

  @BeforeAll
  static void start() throws Exception {
    gateway = GatewayTestNode.start("simulator-answer-shape", Map.of()).serving(AGENT);
    client = OpenAIOkHttpClient.builder().apiKey("unused").baseUrl(gateway.uri("/v1").toString())
        .putHeader("X-Agent-Id", AGENT).maxRetries(0).build();
  }

  @AfterAll
  static void stop() {
    if (gateway != null) gateway.close();
  }

  @Test
  void aStructuredAnswerParsesIntoTheAgentsType() {
    StructuredChatCompletion<Forecast> answer = client.chat().completions().create(
        ChatCompletionCreateParams.builder().model("default").addUserMessage("Weather in Oslo?")
            .responseFormat(Forecast.class).build());
    Forecast f = answer.choices().get(0).message().content().orElseThrow();
    assertTrue(f.city.endsWith("Weather in Oslo?"), f.city);
    assertEquals(0, f.celsius);
    assertEquals(List.of(), f.warnings);
  }

  /**
   * {@code top_logprobs} gets that many alternatives per token, the sampled one first, as vLLM lists them: the
   * list was always empty (trial t140, the openai Python client asking {@code top_logprobs=2}).
   */
  @Test
  void topLogprobsListsThatManyAlternativesPerToken() {
    ChatCompletion answer = client.chat().completions().create(ChatCompletionCreateParams.builder().model("default")
        .addUserMessage("Hi there").logprobs(true).topLogprobs(2).build());
    var tokens = answer.choices().get(0).logprobs().orElseThrow().content().orElseThrow();
    assertTrue(!tokens.isEmpty());
    for (var token : tokens) {
      assertEquals(2, token.topLogprobs().size(), token.toString());
      assertEquals(token.token(), token.topLogprobs().get(0).token(), "the sampled token first");
      assertEquals(token.logprob(), token.topLogprobs().get(0).logprob());
    }
  }

  @Test
  void anAnswerOverTheTokenLimitIsCutWithFinishReasonLength() {
    ChatCompletion cut = client.chat().completions().create(ChatCompletionCreateParams.builder().model("default")
        .addUserMessage("Tell me a long story about the sea and the wind").maxCompletionTokens(3).build());
    assertEquals(ChatCompletion.Choice.FinishReason.LENGTH, cut.choices().get(0).finishReason());
    assertEquals(12, cut.choices().get(0).message().content().orElseThrow().length(), "3 tokens of 4 characters");
    assertEquals(3L, cut.usage().orElseThrow().completionTokens());

    ChatCompletion whole = client.chat().completions().create(ChatCompletionCreateParams.builder().model("default")
        .addUserMessage("Hi").maxCompletionTokens(500).build());
    assertEquals(ChatCompletion.Choice.FinishReason.STOP, whole.choices().get(0).finishReason());
  }
}
