package io.otl.wire;

import com.fasterxml.jackson.core.JsonProcessingException;
import java.io.IOException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Why a document is not JSON, in words an edge may show and log. Jackson quotes the token or key it
 * stumbled on ({@code Unrecognized token 'mobile13890123456'}): that is client data, so every edge
 * (an HTTP 400, a Kafka dead-letter reason and its log line) describes the failure through here.
 */
public final class JsonParseProblem {
  private static final Pattern QUOTED = Pattern.compile("'([^']*)'");
  /**
   * Jackson's "expected close marker for Object (start marker at [Source: REDACTED
   * (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: 1, column: 1])": a body cut short
   * (an unclosed brace) showed the parser's settings to the user (trial t89). Only where it opened is kept.
   */
  private static final Pattern START_MARKER =
      Pattern.compile("\\(start marker at \\[Source: .*?; line: (\\d+), column: (\\d+)\\]\\)");

  /**
   * The token Jackson could not read is a value the client sent, never a key: a plain word such as a
   * name ({@code Unrecognized token 'Alice_Smith'}) passed the plain-word rule below and reached the
   * dead letter's header and the log (trial t99). Its position still says where it is.
   */
  private static final Pattern UNRECOGNIZED_TOKEN = Pattern.compile("Unrecognized token '[^']*'");

  private JsonParseProblem() {}

  /**
   * Jackson's first line, with quoted tokens and keys shown only when they are plain words, dotted
   * ones too (a policy key sent twice, as error paths show keys), and where it happened.
   */
  public static String describe(IOException e) {
    String m = e instanceof JsonProcessingException p ? p.getOriginalMessage() : e.getMessage();
    m = m == null ? "" : m.split("\n")[0];
    m = START_MARKER.matcher(m).replaceAll("(opened at line $1, column $2)");
    m = UNRECOGNIZED_TOKEN.matcher(m).replaceAll("Unrecognized token '*'");
    m = QUOTED.matcher(m).replaceAll(r -> Matcher.quoteReplacement(
        "'" + (r.group(1).length() <= 1 ? r.group(1) : io.otl.core.Ids.shownPath(r.group(1))) + "'"));
    if (e instanceof JsonProcessingException p && p.getLocation() != null && p.getLocation().getLineNr() > 0) {
      m += " (line " + p.getLocation().getLineNr() + ", column " + p.getLocation().getColumnNr() + ")";
    }
    return m;
  }
}
