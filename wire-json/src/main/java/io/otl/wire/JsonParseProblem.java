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

  /**
   * Jackson's advice to its own programmer ({@code enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to
   * allow}, {@code not recognized as one since Feature 'ALLOW_COMMENTS' not enabled for parser}): a client
   * cannot enable a feature of the node's parser, so the advice sent it looking for a setting (trial t120).
   */
  private static final Pattern PARSER_FEATURE_ADVICE = Pattern.compile(
      ":? ?enable `JsonReadFeature\\.[A-Z_]+` to allow|:? ?\\(not recognized as one since Feature '[A-Z_]+' not enabled"
          + " for parser\\)");

  /**
   * Jackson's own nesting limit ({@code Document nesting depth (1001) exceeds the maximum allowed (1000, from
   * `StreamReadConstraints.getMaxNestingDepth()`)}), met before the edges' far lower {@code max-json-depth}
   * (32) is checked: the answer named a parser method and told the client 1000 levels were allowed.
   */
  private static final Pattern NESTING_LIMIT = Pattern.compile(
      "Document nesting depth \\(\\d+\\) exceeds the maximum allowed \\((\\d+), from `StreamReadConstraints\\.[A-Za-z]+\\(\\)`\\)");

  /**
   * Jackson's refusal of data after the document ({@code Trailing token (of type START_OBJECT) found after value
   * (bound as `com.fasterxml.jackson.databind.JsonNode`): not allowed as per
   * `DeserializationFeature.FAIL_ON_TRAILING_TOKENS`}) named the node's classes and a feature of its parser on
   * every edge (trial t155); the client sent two values, or text after one.
   */
  private static final Pattern TRAILING_TOKEN = Pattern.compile("Trailing token \\(of type [A-Z_]+\\) found after value.*");

  /** Jackson's other read limits (a number of 1,001 digits …): the figure stays, the parser's method goes. */
  private static final Pattern CONSTRAINTS_METHOD = Pattern.compile(", from `StreamReadConstraints\\.[A-Za-z]+\\(\\)`");

  private JsonParseProblem() {}

  /**
   * Whether {@code e} is Jackson's refusal of a document nested deeper than its own limit (1000 levels):
   * an edge with a lower limit of its own answers with that one.
   */
  public static boolean tooDeep(IOException e) {
    return e instanceof com.fasterxml.jackson.core.exc.StreamConstraintsException
        && e.getMessage() != null && e.getMessage().startsWith("Document nesting depth");
  }

  /**
   * Jackson's first line, with quoted tokens and keys shown only when they are plain words, dotted
   * ones too (a policy key sent twice, as error paths show keys), and where it happened.
   */
  public static String describe(IOException e) {
    String m = e instanceof JsonProcessingException p ? p.getOriginalMessage() : e.getMessage();
    m = m == null ? "" : m.split("\n")[0];
    m = TRAILING_TOKEN.matcher(m).replaceAll("data after the end of the JSON document: send exactly one");
    m = START_MARKER.matcher(m).replaceAll("(opened at line $1, column $2)");
    m = NESTING_LIMIT.matcher(m).replaceAll("the document is nested more than $1 levels deep");
    m = CONSTRAINTS_METHOD.matcher(m).replaceAll("");
    m = PARSER_FEATURE_ADVICE.matcher(m).replaceAll("");
    m = UNRECOGNIZED_TOKEN.matcher(m).replaceAll("Unrecognized token '*'");
    m = QUOTED.matcher(m).replaceAll(r -> Matcher.quoteReplacement(
        "'" + (r.group(1).length() <= 1 ? r.group(1) : io.otl.core.Ids.shownPath(r.group(1))) + "'"));
    if (e instanceof JsonProcessingException p && p.getLocation() != null && p.getLocation().getLineNr() > 0) {
      m += " (line " + p.getLocation().getLineNr() + ", column " + p.getLocation().getColumnNr() + ")";
    }
    return m;
  }
}
