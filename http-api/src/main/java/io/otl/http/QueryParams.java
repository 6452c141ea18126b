package io.otl.http;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.completeWithFuture;
import static org.apache.pekko.http.javadsl.server.Directives.extractRequest;
import static org.apache.pekko.http.javadsl.server.Directives.extractRequestEntity;
import static org.apache.pekko.http.javadsl.server.Directives.formFieldMultiMap;
import static org.apache.pekko.http.javadsl.server.Directives.parameterMultiMap;

import io.otl.core.session.Desensitizer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.apache.pekko.http.javadsl.model.MediaTypes;
import org.apache.pekko.http.javadsl.model.RequestEntity;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * Query parameters of the API's routes. An optional one sent empty ({@code ?agentId=&status=}, as
 * design §7.1 writes the filters and as clients send an unset filter) means the same as one not sent;
 * a value that is present is validated by the route. Every documented route refuses a parameter it does
 * not take and any sent twice ({@link #asDocumented}, once for all; {@link #only} where a route reads its
 * parameters): a misspelt filter ({@code /v1/jobs?agent=a1}) would otherwise answer as if no filter were
 * set, and a repeated one ({@code ?sessionId=a&sessionId=b}) was read as its first value, so a rating
 * could land in another session than the client meant.
 */
final class QueryParams {
  /** A parameter name that is safe to repeat in an error: anything else may hold a client's data. */
  private static final Pattern PRINTABLE_NAME = Pattern.compile("[A-Za-z0-9_.\\-]{1,40}");

  private static final Pattern ASCII_INTEGER = Pattern.compile("[+-]?[0-9]{1,18}");

  private QueryParams() {}

  /**
   * A query integer in ASCII digits. {@code Long.parseLong} also takes other scripts' digits, so
   * {@code score=٣} (Arabic-Indic) or a full-width {@code ３} was a rating of 3 and {@code limit=١٠}
   * a page of 10, where every other route refuses what is not ASCII.
   */
  static long integer(String text) {
    if (text == null || !ASCII_INTEGER.matcher(text).matches()) throw new NumberFormatException("not an ASCII integer");
    return Long.parseLong(text);
  }

  /**
   * A query value without the spaces around it ({@code +} or {@code %20}, as a form or a hand-typed
   * URL may add). Only spaces and tabs: {@code String.trim} also dropped NUL and the other control
   * characters, so {@code helpful=true%00} was a thumb up and {@code score=%005} a rating of 5.
   */
  static String spacesTrimmed(String value) {
    int start = 0;
    int end = value.length();
    while (start < end && (value.charAt(start) == ' ' || value.charAt(start) == '\t')) start++;
    while (end > start && (value.charAt(end - 1) == ' ' || value.charAt(end - 1) == '\t')) end--;
    return value.substring(start, end);
  }

  /**
   * An offset sent with an unencoded {@code +} ({@code ?asOf=2026-11-20T10:00:00+08:00}, as typed into
   * curl or a browser): query decoding turns that {@code +} into a space.
   */
  private static final Pattern PLUS_AS_SPACE =
      Pattern.compile("(\\d{4}-\\d{2}-\\d{2}[Tt]\\d{2}:\\d{2}(?::\\d{2}(?:\\.\\d{1,9})?)?) (\\d{2}:\\d{2})");

  /**
   * A query time ({@code asOf}, {@code since}, {@code until}), read as the command line reads its
   * times ({@link io.otl.core.IsoTimes}); an offset's {@code +} typed unencoded in the URL arrives as a
   * space and is put back. A time without a zone is told so, as the command line tells it (since trial
   * t73): "is not an ISO-8601 time" for {@code asOf=2026-11-20T10:00:00} sent the user looking for a typo.
   * The value is not repeated.
   */
  static Instant instant(String name, String text) {
    java.util.regex.Matcher plus = PLUS_AS_SPACE.matcher(text);
    String t = plus.matches() ? plus.group(1) + "+" + plus.group(2) : text;
    return io.otl.core.IsoTimes.parse(t).orElseThrow(() -> BadRequest.invalid(io.otl.core.IsoTimes.withoutZone(t)
        ? name + " has no time zone: add Z for UTC or the offset of yours, e.g. 2026-11-20T10:00:00Z or "
            + "2026-11-20T10:00:00%2B08:00 (a + in a URL query is %2B)"
        : name + " is not an ISO-8601 time, e.g. 2026-11-20T02:00:00Z, "
            + "2026-11-20T10:00:00%2B08:00 (a + in a URL query is %2B) or 2026-11-20"));
  }

  /** The query of a request that passed {@link #only}: each parameter sent at most once. */
  static final class Query {
    private final Map<String, List<String>> params;

    Query(Map<String, List<String>> params) {
      this.params = params;
    }

    /** The value as sent, empty text included. */
    Optional<String> sent(String name) {
      List<String> values = params.get(name);
      return values == null || values.isEmpty() ? Optional.empty() : Optional.of(values.get(0));
    }

    /** The value, unless it was not sent or sent empty (an optional filter sent empty is one not sent). */
    Optional<String> given(String name) {
      return sent(name).filter(v -> !v.isBlank());
    }
  }

  /**
   * Runs {@code inner} with the query when every query parameter is one of {@code names}, each sent at
   * most once; a 400 otherwise.
   */
  static Route only(List<String> names, Function<Query, Route> inner) {
    return parameterMultiMap(params -> {
      String problem = problem(params, names);
      if (problem == null) return inner.apply(new Query(params));
      return completeWithFuture(CompletableFuture.completedFuture(ApiErrors.toResponse(BadRequest.invalid(problem))));
    });
  }

  /**
   * The paths of other protocols' clients under {@code /v1}, which keep ignoring query parameters they do not
   * know: OpenAI and Azure OpenAI clients add their own ({@code ?api-version=…}) to the gateway's, and an OTLP
   * exporter's endpoint may carry a vendor's. Served by other routes than the API's, but listed in its
   * document, so named here.
   */
  private static final java.util.Set<String> OTHER_PROTOCOLS =
      java.util.Set.of("/v1/chat/completions", "/v1/models", "/v1/traces");

  /**
   * The API's one query rule, applied once around its routes: a request for a documented operation may
   * send only the query parameters the document ({@code /v1/openapi.json}) lists for it, each once; any
   * other is a 400 naming it. Routes that took none used to ignore one ({@code GET /v1/sessions/s1?limt=10}
   * answered as if the typo were not there), while those that took some refused it; each route kept its
   * own check, and the ones without a check were the silent ones. A request the document does not describe
   * (another method, an unknown path) passes, for the routes to answer 404 or 405 as they would.
   */
  static Route asDocumented(java.util.function.Supplier<Route> inner) {
    return extractRequest(request -> {
      String path = request.getUri().path();
      if (OTHER_PROTOCOLS.contains(path)) return inner.get();
      return ApiRoutes.queryParameters(request.method().name(), path)
          .map(names -> only(names, query -> inner.get()))
          .orElseGet(inner);
    });
  }

  /**
   * {@link #only}, where the parameters may also come as an HTML form body
   * ({@code application/x-www-form-urlencoded}, or {@code multipart/form-data}): AgentScope's rate and
   * thumbs controller reads them with Spring's {@code @RequestParam}, which takes the query and a form
   * alike, and {@code curl -d 'sessionId=s1&score=5'} sends a form ({@code curl -F} a multipart one).
   * That was a 400 "sessionId is required" here. A parameter in both the query and the form counts as
   * sent twice.
   */
  static Route onlyOrForm(List<String> names, Function<Query, Route> inner) {
    return extractRequestEntity(entity -> {
      var media = entity.getContentType().mediaType();
      if (!media.equals(MediaTypes.APPLICATION_X_WWW_FORM_URLENCODED)
          && !(media.mainType().equals("multipart") && media.subType().equals("form-data"))) {
        return notAForm(names, entity, inner);
      }
      // the form path reads the body itself, so it needs the API's encoding rule too (trial t17)
      return RequestBodies.uncompressed("form body", () -> parameterMultiMap(params -> formFieldMultiMap(form -> {
        Map<String, List<String>> all = new HashMap<>();
        params.forEach((k, v) -> all.computeIfAbsent(k, x -> new ArrayList<>()).addAll(v));
        form.forEach((k, v) -> all.computeIfAbsent(k, x -> new ArrayList<>()).addAll(v));
        String problem = problem(all, names, form.keySet());
        if (problem == null) return inner.apply(new Query(all));
        return completeWithFuture(CompletableFuture.completedFuture(ApiErrors.toResponse(BadRequest.invalid(problem))));
      })));
    });
  }

  /**
   * A body that is no form, where the parameters are read from the query and a form only: refused,
   * not dropped. {@code {"score":1}} beside {@code ?score=5} recorded 5 without a word. A JSON body
   * with fields is a 400 (the shared {@link RequestBodies#noBody} rule: empty and {@code {}} pass),
   * any other body a 415 naming the form types (not "send JSON", which this route does not read).
   */
  private static Route notAForm(List<String> names, RequestEntity entity, Function<Query, Route> inner) {
    String where = String.join(" and ", names) + " go in the query or in a form body "
        + "(application/x-www-form-urlencoded or multipart/form-data)";
    var type = entity.getContentType().mediaType();
    boolean json = type.isApplication() && (type.subType().equals("json") || type.subType().endsWith("+json"));
    if (!json && !entity.isKnownEmpty()) {
      return complete(Json.error(StatusCodes.UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type",
          "this route reads no body of that Content-Type: " + where));
    }
    return RequestBodies.body(b -> {
      try {
        RequestBodies.noBody(b, "this route reads no JSON body: " + where);
      } catch (RuntimeException e) {
        return completeWithFuture(CompletableFuture.completedFuture(ApiErrors.toResponse(e)));
      }
      return only(names, inner);
    });
  }

  /** What is wrong with {@code params} for a route taking {@code names}, or null. */
  static String problem(Map<String, List<String>> params, List<String> names) {
    return problem(params, names, java.util.Set.of());
  }

  /**
   * The same, with the names a form body sent ({@code formNames}) called form fields: an unknown
   * field of {@code -d 'sessionId=s&score=3&foo=1'} was refused as a query parameter (trial t9).
   */
  static String problem(Map<String, List<String>> params, List<String> names, java.util.Set<String> formNames) {
    for (Map.Entry<String, List<String>> p : params.entrySet()) {
      String name = p.getKey();
      // An empty pair (the trailing & of "?agentId=a1&", or "?&") names nothing: the URL standard's query
      // parsing (a browser's URLSearchParams) skips it, and it was refused as "a query parameter"
      if (name.isEmpty() && p.getValue().stream().allMatch(String::isEmpty)) continue;
      boolean inForm = formNames.contains(name);
      String kind = inForm ? "form field" : "query parameter";
      if (!names.contains(name)) {
        String shown = PRINTABLE_NAME.matcher(name).matches() && Desensitizer.builtInScanner().findings(name).isEmpty()
            ? "the " + kind + " " + name : "a " + kind;
        return shown + (names.isEmpty() ? " is not taken: this route takes no query parameters"
            : " is not one this route takes; it takes " + String.join(", ", names));
      }
      if (p.getValue().size() > 1) {
        return "the " + kind + " " + name + " is sent " + p.getValue().size() + " times"
            + (inForm ? " (query and form together)" : "") + "; send it once";
      }
    }
    return null;
  }
}
