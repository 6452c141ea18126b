package io.otl.agentscope;

import io.otl.core.api.DataCollector;
import io.otl.core.session.SessionInput;
import java.net.URI;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * Where captured events go: a node in the same JVM ({@link #embedded}) or a remote node over HTTP
 * ({@link #http}). The hook never calls a sink on the agent's thread: {@link AsyncSender} does.
 */
public interface TrajectorySink {
  /**
   * Delivers one batch of one session. The stage fails with a {@link DeliveryException}; one that
   * is not {@link DeliveryException#retriable()} (the node refused the input) is dropped at once.
   */
  CompletionStage<Void> deliver(String sessionId, String agentId, List<SessionInput> events);

  /**
   * What the node did with a batch it acknowledged. A node with {@code collect-mode = sampled}
   * acknowledges every batch of a session its sampling dropped ({@code "sampled": false}) and stores
   * none of it: counted as delivered, such a session looked recorded while the node held nothing.
   */
  enum Outcome {
    /** Stored (or already stored: a resend). */
    STORED,
    /** Acknowledged and not stored: the node's sampling keeps no event of this session. */
    NOT_SAMPLED
  }

  /**
   * Delivers like {@link #deliver} and says whether the node kept the batch. The hook calls this one;
   * the default (for a sink of your own) takes every acknowledged batch as stored.
   */
  default CompletionStage<Outcome> deliverWithOutcome(String sessionId, String agentId, List<SessionInput> events) {
    return deliver(sessionId, agentId, events).thenApply(done -> Outcome.STORED);
  }

  /** A node in this JVM, e.g. {@code TrainingNode.start(config).dataCollector()}. */
  static TrajectorySink embedded(DataCollector collector) {
    return new EmbeddedSink(collector);
  }

  /** A remote node: {@code POST {baseUrl}/v1/sessions/{id}/events}, without a bearer token. */
  static TrajectorySink http(String baseUrl) {
    return http(baseUrl, null);
  }

  /**
   * A remote node whose API asks for {@code Authorization: Bearer <token>} (the token is never logged).
   * {@code baseUrl} is the node's URL ({@code http://node:8080}); the gateway's OpenAI base URL
   * ({@code http://node:8080/v1}) names the same node and is taken as it.
   *
   * @throws IllegalArgumentException when {@code baseUrl} is no http(s) URL with a host, or {@code bearerToken}
   *     has white space around it or a control character in it (a secret file's last newline)
   */
  static TrajectorySink http(String baseUrl, String bearerToken) {
    return new HttpSink(HttpSink.nodeUrl(baseUrl), bearerToken);
  }

  /** Why a batch was not stored. */
  final class DeliveryException extends RuntimeException {
    private final boolean retriable;

    public DeliveryException(String message, boolean retriable, Throwable cause) {
      super(message, cause);
      this.retriable = retriable;
    }

    /** True when sending the same batch again may succeed (node down, timeout, 429, 5xx). */
    public boolean retriable() {
      return retriable;
    }
  }
}
