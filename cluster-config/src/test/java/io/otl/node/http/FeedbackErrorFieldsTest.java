package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code POST /v1/sessions/{id}/feedback} takes one feedback object, not an events batch: its errors
 * name the fields the client sent ({@code msgId}, {@code value}), never {@code events[0].…}, and
 * never echo the client's text. A real node over loopback.
 */
class FeedbackErrorFieldsTest {
  private static TrainingNode node;
  private static Http api;

  @BeforeAll
  static void start() throws Exception {
    Path dir = Files.createDirectories(Path.of("target", "feedback-fields-" + UUID.randomUUID()));
    node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir), true));
    api = new Http(node.httpPort());
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  private static String session() {
    String id = "fb-fields-" + UUID.randomUUID();
    Http.Response r = api.post("/v1/sessions/" + id + "/events", "{\"agentId\":\"fb-agent\",\"events\":["
        + "{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\"},"
        + "{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"hello\",\"msgId\":\"resp-1\"}]}");
    assertEquals(202, r.status(), r.body());
    return id;
  }

  @Test
  void anUnknownMsgIdIsNamedAsSentAndNotEchoed() {
    String id = session();
    Http.Response r = api.post("/v1/sessions/" + id + "/feedback",
        "{\"kind\":\"THUMBS_UP\",\"msgId\":\"resp-13812345678\"}");
    assertEquals(404, r.status(), r.body());
    String message = r.json().path("message").asText();
    assertTrue(message.startsWith("msgId "), message);
    assertFalse(r.body().contains("events["), r.body());
    assertFalse(r.body().contains("13812345678"), "the client's id is not echoed: " + r.body());
    assertEquals(2, api.get("/v1/sessions/" + id).json().path("counts").path("messages").asInt());
    assertEquals(0, api.get("/v1/sessions/" + id).json().path("feedback").size(), "nothing stored");
  }

  /**
   * A blank msgId is none (clients fill the field whether or not they have an id, trial t77): an answer
   * sent with {@code "msgId": ""} was stored with it, and feedback with {@code "msgId": ""} then rated
   * that answer, or was a 404 "not the msgId of a response" on a session without one (trial t100). The
   * answer is stored without a msgId, and such feedback rates the whole session.
   */
  @Test
  void aBlankMsgIdIsNoMsgIdOnAnAnswerAndOnFeedback() {
    String id = session();
    Http.Response none = api.post("/v1/sessions/" + id + "/feedback", "{\"kind\":\"ADOPTED\",\"msgId\":\" \"}");
    assertEquals(202, none.status(), "no answer has a blank msgId, and none is needed: " + none.body());
    Http.Response answer = api.post("/v1/sessions/" + id + "/events", "{\"agentId\":\"fb-agent\",\"events\":["
        + "{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"more\",\"msgId\":\"\"}]}");
    assertEquals(202, answer.status(), answer.body());
    Http.Response blank = api.post("/v1/sessions/" + id + "/feedback", "{\"kind\":\"THUMBS_UP\",\"msgId\":\"\"}");
    assertEquals(202, blank.status(), blank.body());

    var stored = api.get("/v1/sessions/" + id).json();
    assertTrue(stored.path("messages").get(2).path("msgId").isNull(), "stored without a msgId: " + stored);
    assertEquals(2, stored.path("feedback").size(), stored.toString());
    for (var f : stored.path("feedback")) {
      assertTrue(f.path("msgId").isNull(), "rates the session, not an answer with id \"\": " + stored);
    }
  }

  /**
   * A thumb takes no value (design §3.1.1): {@code {"kind":"THUMBS_UP","value":1}} stays accepted, but a value
   * that says the opposite (THUMBS_UP with -1) was stored as a thumb up without a word; it is a 400 naming
   * the conflict, over the feedback route and in an events batch alike, and nothing is stored.
   */
  @Test
  void aThumbsValueThatContradictsTheKindIsRefusedAndOneThatAgreesIsAccepted() {
    String id = session();
    assertEquals(202, api.post("/v1/sessions/" + id + "/feedback", "{\"kind\":\"THUMBS_UP\",\"value\":1}").status());
    assertEquals(202, api.post("/v1/sessions/" + id + "/feedback", "{\"kind\":\"THUMBS_DOWN\",\"value\":-1}").status());
    Http.Response up = api.post("/v1/sessions/" + id + "/feedback", "{\"kind\":\"THUMBS_UP\",\"value\":-1}");
    assertEquals(400, up.status(), up.body());
    assertTrue(up.json().path("message").asText().startsWith("value is negative, which contradicts kind THUMBS_UP"),
        up.body());
    Http.Response down = api.post("/v1/sessions/" + id + "/events", "{\"agentId\":\"fb-agent\",\"events\":["
        + "{\"type\":\"feedback\",\"kind\":\"THUMBS_DOWN\",\"value\":1}]}");
    assertEquals(400, down.status(), down.body());
    assertTrue(down.json().path("message").asText().contains("value is positive, which contradicts kind THUMBS_DOWN"),
        down.body());
    var stored = api.get("/v1/sessions/" + id).json().path("feedback");
    assertEquals(2, stored.size(), "only the two agreeing thumbs: " + stored);
    assertTrue(stored.get(0).path("value").isNull(), "a thumb's value is not stored: " + stored);
    Http.Response half = api.post("/v1/sessions/" + id + "/feedback", "{\"kind\":\"RATING\",\"value\":3.5}");
    assertEquals("value must be a whole number for a RATING (an integer from 1 to 5)",
        half.json().path("message").asText(), half.body());
  }

  @Test
  void anInvalidValueIsNamedAsSent() {
    String id = session();
    Http.Response r = api.post("/v1/sessions/" + id + "/feedback", "{\"kind\":\"RATING\",\"value\":9}");
    assertEquals(400, r.status(), r.body());
    String message = r.json().path("message").asText();
    assertTrue(message.startsWith("value "), message);
    assertFalse(r.body().contains("events["), r.body());
  }

  /**
   * A required parameter sent empty is said to be missing (docs/api.md: "required ones are 400 when
   * empty"), and a thumbs word not taken lists the ones that are: the walk of the docs got "helpful is
   * not true or false" for {@code helpful=} and for {@code helpful=maybe}, though yes/no, on/off, 1/0 work.
   */
  @Test
  void anEmptyOrUnknownRateOrThumbsValueSaysWhatIsTaken() {
    String id = session();
    Http.Response empty = api.post("/v1/feedback/thumbs?sessionId=" + id + "&helpful=", null);
    assertEquals(400, empty.status(), empty.body());
    assertEquals("the query parameter helpful is required (true/false)", empty.json().path("message").asText());
    Http.Response word = api.post("/v1/feedback/thumbs?sessionId=" + id + "&helpful=maybe", null);
    assertEquals(400, word.status(), word.body());
    assertEquals("helpful is not true or false (also taken: 1/0, yes/no, on/off)",
        word.json().path("message").asText());
    Http.Response score = api.post("/v1/feedback/rate?sessionId=" + id + "&score=", null);
    assertEquals(400, score.status(), score.body());
    assertEquals("the query parameter score is required (1-5)", score.json().path("message").asText());
    assertEquals(0, api.get("/v1/sessions/" + id).json().path("feedback").size(), "nothing stored");
  }

  /** An unknown field of a form body was refused as "the query parameter foo" (trial t9). */
  @Test
  void anUnknownFormFieldIsCalledAFormField() {
    String id = session();
    Http.Response r = api.postBytes("/v1/feedback/rate",
        ("sessionId=" + id + "&score=3&foo=1").getBytes(java.nio.charset.StandardCharsets.UTF_8),
        "application/x-www-form-urlencoded");
    assertEquals(400, r.status(), r.body());
    assertEquals("the form field foo is not one this route takes; it takes sessionId, score",
        r.json().path("message").asText());
    Http.Response q = api.post("/v1/feedback/rate?sessionId=" + id + "&score=3&foo=1", null);
    assertEquals("the query parameter foo is not one this route takes; it takes sessionId, score",
        q.json().path("message").asText());
    assertEquals(0, api.get("/v1/sessions/" + id).json().path("feedback").size(), "nothing stored");
  }

  /**
   * A form body that is not valid form encoding (a stray {@code %}) is a 400 that says where it broke,
   * without the body: pekko's message quoted the whole form back, so an e-mail address or a phone
   * number in a field the route does not even read came back in the error (trial t2).
   */
  @Test
  void aMalformedFormBodyIsNotEchoedInTheError() {
    String id = session();
    byte[] form = ("sessionId=" + id + "&score=5&note=alice@example.com+13812345678&x=%zz").getBytes();
    Http.Response r = api.postBytes("/v1/feedback/rate", form, "application/x-www-form-urlencoded");
    assertEquals(400, r.status(), r.body());
    String message = r.json().path("message").asText();
    assertTrue(message.startsWith("the form body is malformed"), message);
    assertTrue(message.contains("(line 1, column "), "says where: " + message);
    assertFalse(r.body().contains("alice") || r.body().contains("13812345678") || r.body().contains("note="),
        "the body is not echoed: " + r.body());
    assertEquals(0, api.get("/v1/sessions/" + id).json().path("feedback").size(), "nothing stored");
  }

  /**
   * AgentScope's controller reads sessionId and score with Spring's {@code @RequestParam}, which takes a
   * form body as well as the query; {@code curl -d 'sessionId=s&score=5'} sends one ({@code curl -F} a
   * multipart one). A parameter in the query and in the form is sent twice; a form's bad value is
   * refused as the query's.
   */
  @Test
  void rateAndThumbsTakeTheirParametersAsAFormBodyToo() {
    String id = session();
    String form = "application/x-www-form-urlencoded";
    Http.Response rate = api.postBytes("/feedback/rate", ("sessionId=" + id + "&score=4").getBytes(), form);
    assertEquals(200, rate.status(), rate.body());
    Http.Response thumbs = api.postBytes("/v1/feedback/thumbs?sessionId=" + id, "helpful=no".getBytes(), form);
    assertEquals(200, thumbs.status(), thumbs.body());
    Http.Response twice = api.postBytes("/v1/feedback/rate?sessionId=" + id, ("sessionId=" + id + "&score=2").getBytes(),
        form);
    assertEquals(400, twice.status(), twice.body());
    assertTrue(twice.json().path("message").asText().contains("is sent 2 times"), twice.body());
    Http.Response bad = api.postBytes("/v1/feedback/rate", ("sessionId=" + id + "&score=9").getBytes(), form);
    assertEquals(400, bad.status(), bad.body());
    assertEquals("invalid_request", bad.json().path("error").asText(), bad.body());
    Http.Response other = api.postBytes("/v1/feedback/rate", ("sessionId=" + id + "&scor=3").getBytes(), form);
    assertEquals(400, other.status(), other.body());
    Http.Response malformed = api.postBytes("/v1/feedback/rate", "sessionId=%ZZ&score=3".getBytes(), form);
    assertEquals(400, malformed.status(), malformed.body());
    assertTrue(malformed.json().path("message").isTextual(), malformed.body());
    String multipart = "--b\r\nContent-Disposition: form-data; name=\"sessionId\"\r\n\r\n" + id + "\r\n"
        + "--b\r\nContent-Disposition: form-data; name=\"score\"\r\n\r\n2\r\n--b--\r\n";
    Http.Response parts = api.postBytes("/v1/feedback/rate", multipart.getBytes(), "multipart/form-data; boundary=b");
    assertEquals(200, parts.status(), parts.body());
    com.fasterxml.jackson.databind.JsonNode stored = api.get("/v1/sessions/" + id).json().path("feedback");
    assertEquals(3, stored.size(), "the ratings and the thumbs, nothing of the refused ones: " + stored);
    assertEquals(2.0, stored.get(2).path("value").asDouble());
    assertEquals("RATING", stored.get(0).path("kind").asText());
    assertEquals(4.0, stored.get(0).path("value").asDouble());
    assertEquals("THUMBS_DOWN", stored.get(1).path("kind").asText());
  }

  /**
   * rate and thumbs read the query or a form, nothing else: a JSON body ({@code {"score":1}} beside
   * {@code ?score=5}) was dropped without a word and the query's value recorded (a new-user trial).
   * Now a JSON body with fields is a 400 naming where the parameters go, any other body a 415, and
   * nothing is recorded; an empty body or {@code {}} passes as before.
   */
  @Test
  void rateAndThumbsRefuseABodyTheyDoNotRead() {
    String id = session();
    for (String path : java.util.List.of("/v1/feedback/rate?sessionId=" + id + "&score=5",
        "/feedback/thumbs?sessionId=" + id + "&helpful=true")) {
      Http.Response json = api.post(path, path.contains("rate") ? "{\"score\":1}" : "{\"helpful\":false}");
      assertEquals(400, json.status(), json.body());
      assertEquals("invalid_request", json.json().path("error").asText(), json.body());
      String message = json.json().path("message").asText();
      assertTrue(message.contains("query") && message.contains("application/x-www-form-urlencoded"), message);
      Http.Response text = api.postBytes(path, "score=1".getBytes(), "text/plain");
      assertEquals(415, text.status(), text.body());
      assertEquals("unsupported_media_type", text.json().path("error").asText(), text.body());
      assertTrue(text.json().path("message").asText().contains("form"), text.body());
    }
    assertEquals(0, api.get("/v1/sessions/" + id).json().path("feedback").size(), "nothing recorded");
    assertEquals(200, api.post("/v1/feedback/rate?sessionId=" + id + "&score=5", "{}").status());
    assertEquals(200, api.post("/v1/feedback/rate?sessionId=" + id + "&score=4", null).status());
    assertEquals(2, api.get("/v1/sessions/" + id).json().path("feedback").size());
  }

  /** A parameter sent twice is refused, not read as its first value (the feedback could land elsewhere). */
  @Test
  void rateAndThumbsRefuseAParameterSentTwice() {
    String id = session();
    String other = session();
    for (String path : java.util.List.of(
        "/v1/feedback/rate?sessionId=" + id + "&score=5&score=1",
        "/feedback/rate?sessionId=" + other + "&sessionId=" + id + "&score=2",
        "/v1/feedback/thumbs?sessionId=" + id + "&helpful=true&helpful=false",
        "/feedback/thumbs?sessionId=" + other + "&helpful=true&sessionId=" + id)) {
      Http.Response r = api.post(path, null);
      assertEquals(400, r.status(), path + ": " + r.body());
      assertEquals("invalid_request", r.json().path("error").asText(), r.body());
      assertTrue(r.json().path("message").asText().contains("is sent 2 times"), r.body());
    }
    assertEquals(0, api.get("/v1/sessions/" + id).json().path("feedback").size(), "nothing stored");
    assertEquals(0, api.get("/v1/sessions/" + other).json().path("feedback").size(), "nothing stored");
    assertEquals(200, api.post("/v1/feedback/rate?sessionId=" + id + "&score=5", null).status());
  }

  /**
   * Every route with query parameters refuses one it does not take: a misspelt filter answered as if
   * no filter were set (all jobs for {@code ?agent=a1}).
   */
  @Test
  void aQueryParameterARouteDoesNotTakeIsA400NamingTheOnesItTakes() {
    for (String path : java.util.List.of("/v1/jobs?agent=a1", "/v1/jobs?agentId=a1&agentId=a2",
        "/v1/models/a1/route?session=s1", "/v1/audit/session/s1?asof=2026-01-01T00:00:00Z",
        "/v1/jobs/j1/logs?page=2", "/v1/audit/lineage/model/a1?versions=v1",
        "/v1/audit/session/s1/timeline?as_of=2026-01-01T00:00:00Z", "/v1/jobs/j1/logs?limit=5&limit=6")) {
      Http.Response r = api.get(path);
      assertEquals(400, r.status(), path + ": " + r.body());
      assertEquals("invalid_request", r.json().path("error").asText(), r.body());
      assertTrue(r.json().path("message").asText().contains("query parameter"), path + ": " + r.body());
    }
    assertTrue(api.get("/v1/jobs?agent=a1").json().path("message").asText().endsWith("it takes agentId, status"));
    assertEquals(200, api.get("/v1/jobs?agentId=a1&status=").status());
  }

  /** AgentScope's rate and thumbs cannot name an agent: an unknown session is just unknown to them. */
  @Test
  void rateAndThumbsOfAnUnknownSessionDoNotAskForAnAgentId() {
    for (String path : java.util.List.of("/v1/feedback/rate?sessionId=never-seen-1&score=4",
        "/feedback/thumbs?sessionId=never-seen-1&helpful=true")) {
      Http.Response r = api.post(path, null);
      assertEquals(404, r.status(), r.body());
      String message = r.json().path("message").asText();
      assertTrue(message.startsWith("session never-seen-1 is unknown"), message);
      assertFalse(message.contains("agentId"), message);
    }
    assertEquals(404, api.get("/v1/sessions/never-seen-1").status(), "nothing stored");
  }

  /**
   * One feedback object for a session with no events (found driving the loop as a new user): the
   * answer spoke of "its first events", which this request does not have, and never said that the
   * feedback body takes an agentId.
   */
  @Test
  void feedbackToAnUnknownSessionSaysSoAndHowToNameTheAgent() {
    Http.Response r = api.post("/v1/sessions/never-seen-2/feedback", "{\"kind\":\"THUMBS_UP\"}");
    assertEquals(404, r.status(), r.body());
    assertEquals("session never-seen-2 is unknown: feedback applies to a session already recorded (its events, or a "
        + "gateway call); to store feedback as a session's first event, name its agent with \"agentId\" in the body",
        r.json().path("message").asText());
    assertEquals(404, api.get("/v1/sessions/never-seen-2").status(), "nothing stored");
    // As the message says: with the agent named, the feedback is the session's first event.
    assertEquals(202, api.post("/v1/sessions/never-seen-2/feedback",
        "{\"kind\":\"THUMBS_UP\",\"agentId\":\"named-later\"}").status());
    assertEquals("named-later", api.get("/v1/sessions/never-seen-2").json().path("agentId").asText());
  }

  /**
   * Feedback naming a response (msgId) for a session this node does not know yet (trial t157: two nodes,
   * the answer rated through the other node at once, 8 of 30 such ratings): the answering node records
   * the turn a moment after the answer. The message told the caller to name the agent, which only
   * led to a second 404 ("msgId is not the msgId of a response recorded …"); it now says what to do.
   */
  @Test
  void feedbackNamingAResponseOfAnUnknownSessionSaysTheAnswerMayNotBeRecordedYet() {
    Http.Response r = api.post("/v1/sessions/never-seen-3/feedback",
        "{\"kind\":\"THUMBS_UP\",\"msgId\":\"chatcmpl-just-answered\"}");
    assertEquals(404, r.status(), r.body());
    String message = r.json().path("message").asText();
    assertTrue(message.startsWith("session never-seen-3 is unknown"), message);
    assertFalse(message.contains("name its agent"), message);
    assertTrue(message.contains("the node that answered"), message);
    assertTrue(message.contains("retry"), message);
    assertFalse(message.contains("chatcmpl-just-answered"), "the client's id is not echoed: " + message);
    assertEquals(404, api.get("/v1/sessions/never-seen-3").status(), "nothing stored");
  }

  @Test
  void theEventsBatchKeepsNamingTheEventByItsPlace() {
    String id = session();
    Http.Response r = api.post("/v1/sessions/" + id + "/events", "{\"agentId\":\"fb-agent\",\"events\":["
        + "{\"type\":\"feedback\",\"kind\":\"THUMBS_UP\",\"msgId\":\"resp-2\"}]}");
    assertEquals(404, r.status(), r.body());
    assertTrue(r.json().path("message").asText().startsWith("events[0].msgId "), r.body());
  }

  /**
   * A compressed form body is a 415 naming the encoding, as every other API body is, and records
   * nothing: the form path read the body as sent, so {@code Content-Encoding: br} over plain fields
   * recorded the rating, and a real gzip body was a 400 about a control character (trial t17).
   */
  @Test
  void aCompressedFormBodyIsRefusedByItsEncoding() throws Exception {
    String id = session();
    String form = "application/x-www-form-urlencoded";
    byte[] plain = ("sessionId=" + id + "&score=4").getBytes(java.nio.charset.StandardCharsets.UTF_8);
    var zipped = new java.io.ByteArrayOutputStream();
    try (var gz = new java.util.zip.GZIPOutputStream(zipped)) {
      gz.write(plain);
    }
    for (var sent : java.util.List.of(java.util.Map.entry("br", plain), java.util.Map.entry("gzip", zipped.toByteArray()))) {
      Http.Response r = api.postBytes("/v1/feedback/rate", sent.getValue(), form, "Content-Encoding", sent.getKey());
      assertEquals(415, r.status(), r.body());
      assertEquals("Content-Encoding " + sent.getKey() + " is not accepted here: send the form body uncompressed "
          + "(only /v1/traces takes gzip)", r.json().path("message").asText());
    }
    String multipart = "--b\r\nContent-Disposition: form-data; name=\"sessionId\"\r\n\r\n" + id + "\r\n"
        + "--b\r\nContent-Disposition: form-data; name=\"helpful\"\r\n\r\nyes\r\n--b--\r\n";
    Http.Response thumbs = api.postBytes("/v1/feedback/thumbs", multipart.getBytes(), "multipart/form-data; boundary=b",
        "Content-Encoding", "br");
    assertEquals(415, thumbs.status(), thumbs.body());
    assertEquals(0, api.get("/v1/sessions/" + id).json().path("feedback").size(), "nothing stored");
  }

  /**
   * A rate or thumbs value was read after {@code String.trim}, which also drops NUL and the other
   * control characters: {@code helpful=true%00} was a thumb up and {@code score=%005} a rating of 5
   * (trial t45). Only spaces around the value are dropped now.
   */
  @Test
  void aControlCharacterAroundARatingOrThumbIsRefused() {
    String id = session();
    for (String query : new String[] {"thumbs?sessionId=" + id + "&helpful=true%00",
        "thumbs?sessionId=" + id + "&helpful=%01yes", "rate?sessionId=" + id + "&score=%005",
        "rate?sessionId=" + id + "&score=4%1F"}) {
      Http.Response r = api.post("/v1/feedback/" + query, null);
      assertEquals(400, r.status(), query + ": " + r.body());
    }
    assertEquals(0, api.get("/v1/sessions/" + id).json().path("feedback").size(), "nothing stored");
    Http.Response spaced = api.post("/v1/feedback/thumbs?sessionId=" + id + "&helpful=%20true+", null);
    assertEquals(200, spaced.status(), "spaces around the value are still dropped: " + spaced.body());
    Http.Response rated = api.post("/v1/feedback/rate?sessionId=" + id + "&score=+4", null);
    assertEquals(200, rated.status(), rated.body());
    assertEquals(2, api.get("/v1/sessions/" + id).json().path("feedback").size());
  }
}
