package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.RawHttp;
import io.otl.node.testing.TestDatabases;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A form body holding a byte that is not UTF-8 (a raw 0xFF where {@code %FF} was meant) on the routes that
 * read forms, rate and thumbs (review t164): the 400 quoted pekko's parser, {@code Invalid input '�',
 * expected part, '&' or 'EOI'}, its U+FFFD read as {@code ï¿½} by a client taking the answer as Latin-1.
 * It now says the body is not valid UTF-8 and what to do, and stores nothing.
 */
class FormBodyNotUtf8Test {
  private static TrainingNode node;
  private static Http api;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(Files.createTempDirectory("otl-form-utf8-")), true));
    api = new Http(node.httpPort());
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  @Test
  void aFormWithARawNonUtf8ByteIsSaidSoPlainly() throws Exception {
    assertEquals(202, api.post("/v1/sessions/form-utf8-1/events", "{\"agentId\":\"form-agent\",\"events\":"
        + "[{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\"}]}").status());
    for (String path : new String[] {"/v1/feedback/rate", "/v1/feedback/thumbs"}) {
      ByteArrayOutputStream body = new ByteArrayOutputStream();
      body.writeBytes("sessionId=form-utf8-1&score=".getBytes(StandardCharsets.US_ASCII));
      body.write(0xFF);
      RawHttp.Answer a = RawHttp.exchange(node.httpPort(), "POST " + path + " HTTP/1.1\r\nHost: x\r\n"
          + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: " + body.size(), body.toByteArray(), 10_000);
      assertEquals(400, a.status(), path + ": " + a.head() + a.body());
      assertTrue(a.body().contains("the form body is not valid UTF-8 (line 1, column 29)"), path + ": " + a.body());
      assertTrue(a.body().contains("%FF"), path + ": " + a.body());
      assertFalse(a.body().contains("\uFFFD") || a.body().contains("Invalid input"), path + ": " + a.body());
    }
    var session = api.get("/v1/sessions/form-utf8-1").json();
    assertEquals(0, session.path("feedback").size(), "nothing stored: " + session);
    assertEquals(null, session.path("reward").isNull() ? null : session.path("reward"), "nothing stored: " + session);
  }
}
