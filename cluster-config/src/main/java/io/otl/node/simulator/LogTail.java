package io.otl.node.simulator;

import java.time.Duration;
import java.util.List;
import org.apache.pekko.NotUsed;
import org.apache.pekko.http.javadsl.model.ws.Message;
import org.apache.pekko.http.javadsl.model.ws.TextMessage;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;

/**
 * Ray's log tail, {@code GET /api/jobs/<id>/logs/tail} upgraded to a WebSocket, as Ray's dashboard
 * serves it to {@code JobSubmissionClient.tail_job_logs} (and {@code ray job logs --follow}): one
 * text frame per new piece of the job's log (the log so far first), and a normal close once the job
 * has ended and its last lines are sent. The client sends nothing; what it sends is ignored.
 */
final class LogTail {
  /** How often the job's log is read for new lines (Ray's agent polls its log file similarly). */
  static final Duration POLL = Duration.ofMillis(100);

  private LogTail() {}

  /** One read of the log: the text added since the last read, and whether the job had ended. */
  private record Piece(String text, boolean last) {}

  static Flow<Message, Message, NotUsed> of(RayJobsSimulation.SimJob job) {
    Source<Message, NotUsed> frames = Source.tick(Duration.ZERO, POLL, NotUsed.notUsed())
        .mapMaterializedValue(cancellable -> NotUsed.notUsed())
        .statefulMapConcat(() -> {
          int[] sent = {0};
          return tick -> {
            // The status first: a job that has ended wrote its last line before its status changed.
            boolean ended = !RayJobsSimulation.isLive(job.status());
            String logs = job.logs();
            String text = logs.substring(Math.min(sent[0], logs.length()));
            sent[0] = logs.length();
            return List.of(new Piece(text, ended));
          };
        })
        .takeWhile(p -> !p.last(), true)
        .filter(p -> !p.text().isEmpty())
        .map(p -> (Message) TextMessage.create(p.text()));
    // Coupled: a client that closes the socket stops the polling too.
    return Flow.fromSinkAndSourceCoupled(Sink.ignore(), frames);
  }
}
