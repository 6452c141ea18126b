package io.otl.http;

import static io.otl.http.SessionRoutes.guard;
import static org.apache.pekko.http.javadsl.server.Directives.completeWithFuture;
import static org.apache.pekko.http.javadsl.server.Directives.pathEndOrSingleSlash;
import static org.apache.pekko.http.javadsl.server.Directives.pathPrefix;
import static org.apache.pekko.http.javadsl.server.Directives.post;
import static org.apache.pekko.http.javadsl.server.PathMatchers.segment;

import io.otl.core.coordinator.TrainingPolicy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.stream.javadsl.FileIO;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

/**
 * {@code POST /v1/exports/{agentId}?format=sft|dpo|rl[&since=&until=][&allowPii=true]
 * [&sftMinReward=&minQuality=&dpoMinMargin=]}: the
 * command line's {@code export} while a node holds the embedded journal (issue #14). The node writes
 * the dataset into a temporary folder and answers with JSON Lines: the manifest first, then the
 * dataset's lines; the temporary files are removed once sent. POST, so a node with a token asks for
 * it: the answer is every trajectory of the agent. 422 {@code pii_found} when the final scan finds
 * PII and {@code allowPii} is not set (nothing is sent, no file is left). The three filter parameters
 * override the node's {@code training-runner} filters for this export only: the command's {@code --config}
 * names them, and without them an export through a running node silently used the node's instead.
 * A body with fields is a 400 and one that is not JSON a 415, as on every route that takes no body.
 */
public final class ExportRoutes {

  /** Where the node's dataset export lives (implemented by the node with the journal's read side). */
  public interface Exports {
    /**
     * Writes the export; {@code since}/{@code until} may be null. Fails with {@link
     * IllegalArgumentException} for bad input.
     */
    CompletionStage<Download> export(String agentId, String format, Instant since, Instant until, boolean allowPii,
        Filters filters);
  }

  /**
   * Selection filters asked for by the client (design §6: sft-min-reward, min-quality,
   * dpo-min-margin); a null one means "the node's configured value".
   */
  public record Filters(Double sftMinReward, Double minQuality, Double dpoMinMargin) {
    public static final Filters NODE = new Filters(null, null, null);
  }

  /**
   * @param manifestJson the manifest, one line of JSON
   * @param file the dataset, or null when none was written (PII found)
   * @param piiFindings "rule: n lines", empty when clean
   * @param cleanup removes the temporary files
   */
  /**
   * @param nothingSelected null, or why the selection rules left nothing to write (the counts by
   *     reason): then there is no file and no manifest
   */
  public record Download(String manifestJson, Path file, java.util.List<String> piiFindings, Runnable cleanup,
      String nothingSelected) {}

  private final Exports exports;

  public ExportRoutes(Exports exports) {
    this.exports = exports;
  }

  public Route route() {
    return pathPrefix("exports", () -> pathPrefix(segment(), agentId -> pathEndOrSingleSlash(() -> post(() ->
        QueryParams.only(java.util.List.of("format", "since", "until", "allowPii", "sftMinReward", "minQuality",
            "dpoMinMargin"), query -> RequestBodies.body(b -> completeWithFuture(guard(() -> {
              // The selection is in the query: a body's fields ({"format":"dpo"}, {"minQuality":0.9})
              // would otherwise be dropped and the export made with other filters than asked.
              RequestBodies.noBody(b, "an export takes no body: its selection is in the query (format, since, until, "
                  + "allowPii, sftMinReward, minQuality, dpoMinMargin)");
              return export(agentId, query);
            }))))))));
  }

  private static Double number(String name, QueryParams.Query query) {
    Optional<String> text = query.given(name);
    if (text.isEmpty()) return null;
    double v;
    try {
      v = Double.parseDouble(text.get());
    } catch (NumberFormatException e) {
      throw BadRequest.invalid(name + " must be a number");
    }
    if (!Double.isFinite(v)) throw BadRequest.invalid(name + " must be a finite number");
    return v;
  }

  /**
   * {@code minQuality}: a quality score lies in [0, 1] (design §3.1.1), so 1.5 would select nothing
   * and -0.1 everything while the answer looked like a filter at work (the same range as
   * training-runner.min-quality: {@link TrainingPolicy#isQuality}). The value is not echoed.
   */
  private static Double quality(QueryParams.Query query) {
    String range = "minQuality must be a number in " + TrainingPolicy.QUALITY_RANGE;
    Double v;
    try {
      v = number("minQuality", query);
    } catch (BadRequest e) {
      throw BadRequest.invalid(range);
    }
    if (v != null && !TrainingPolicy.isQuality(v)) throw BadRequest.invalid(range);
    return v;
  }

  /**
   * {@code sftMinReward} and {@code dpoMinMargin}: rewards are clipped to [-1, 1] (design §3.1.1), so
   * {@code sftMinReward=4} (a rating of 4 of 5 is a reward of 0.5) or {@code dpoMinMargin=3} selected
   * nothing and answered 422 as if the data were missing. The value is not echoed.
   */
  private static Double ranged(String name, QueryParams.Query query, java.util.function.DoublePredicate ok, String range) {
    String message = name + " must be a number " + (range.startsWith("(") || range.startsWith("[") ? "in " : "")
        + range + " (rewards lie in " + TrainingPolicy.REWARD_RANGE + ")";
    Double v;
    try {
      v = number(name, query);
    } catch (BadRequest e) {
      throw BadRequest.invalid(message);
    }
    if (v != null && !ok.test(v)) throw BadRequest.invalid(message);
    return v;
  }

  private CompletionStage<HttpResponse> export(String agentId, QueryParams.Query query) {
    ModelRoutes.checkAgent(agentId);
    String f = query.sent("format").orElseThrow(() -> BadRequest.invalid("format is required: sft, dpo or rl"));
    if (!java.util.List.of("sft", "dpo", "rl").contains(f)) throw BadRequest.invalid("format must be sft, dpo or rl");
    boolean allow = query.given("allowPii").map(a -> switch (a) {
      case "true" -> true;
      case "false" -> false;
      default -> throw BadRequest.invalid("allowPii must be true or false");
    }).orElse(false);
    Instant from = query.given("since").map(s -> QueryParams.instant("since", s)).orElse(null);
    Instant to = query.given("until").map(s -> QueryParams.instant("until", s)).orElse(null);
    if (from != null && to != null && !from.isBefore(to)) throw BadRequest.invalid("since must be before until");
    Filters filters = new Filters(ranged("sftMinReward", query, TrainingPolicy::isReachableMinReward, TrainingPolicy.MIN_REWARD_RANGE),
        quality(query), ranged("dpoMinMargin", query, TrainingPolicy::isRewardMargin, TrainingPolicy.REWARD_MARGIN_RANGE));
    return exports.export(agentId, f, from, to, allow, filters).thenApply(d -> {
      if (d.nothingSelected() != null) {
        d.cleanup().run();
        return Json.error(StatusCodes.UNPROCESSABLE_ENTITY, "nothing_selected",
            "nothing to export, no file written: " + d.nothingSelected());
      }
      if (d.file() == null) {
        d.cleanup().run();
        return Json.error(StatusCodes.UNPROCESSABLE_ENTITY, "pii_found", "the final PII scan found "
            + String.join(", ", d.piiFindings()) + "; nothing was written (allowPii=true writes it anyway)");
      }
      Source<ByteString, ?> body = Source.single(ByteString.fromString(d.manifestJson() + "\n", StandardCharsets.UTF_8))
          .concat(FileIO.fromPath(d.file()))
          .watchTermination((mat, done) -> {
            done.whenComplete((ok, err) -> d.cleanup().run());
            return mat;
          });
      return HttpResponse.create().withEntity(HttpEntities.create(
          ContentTypes.parse("application/x-ndjson"), body));
    });
  }

}
