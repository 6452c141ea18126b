package io.otl.core.session;

import io.otl.core.JsonSerializable;
import java.util.List;

/**
 * What the inference gateway observed about the model call that produced an assistant message
 * (design §7.5). Numbers and ids only, apart from {@code error}, which is the gateway's own text
 * (desensitized like every stored text), never an upstream body.
 *
 * @param modelVersion the version that answered (after a fallback: the stable)
 * @param servedModel the model name sent upstream
 * @param firstTokenMs latency to the first token (streaming) or to the whole answer
 * @param finishReason OpenAI's {@code finish_reason} of the recorded choice
 * @param aborted the client disconnected mid-stream: the content is partial
 * @param error why the call failed (then the content is empty)
 * @param fallbackFrom the candidate version that failed before the stable answered, or null
 * @param tokenIds completion token ids, with {@code gateway.capture-tokens} and when the upstream
 *     returns them
 * @param logprobs the completion tokens' log-probabilities, under the same conditions
 */
public record InferenceCall(
    String modelVersion,
    String servedModel,
    Long firstTokenMs,
    Integer promptTokens,
    Integer completionTokens,
    String finishReason,
    Boolean aborted,
    String error,
    String fallbackFrom,
    List<Integer> tokenIds,
    List<Double> logprobs)
    implements JsonSerializable {}
