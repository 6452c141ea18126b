package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Bearer-token protection of writes, and of reads when configured (design §7.1). */
class AuthTest {
  private static final String BODY =
      "{\"agentId\":\"a\",\"events\":[{\"type\":\"message\",\"role\":\"user\",\"content\":\"x\"}]}";

  private static TrainingNode node(String token, boolean protectReads) throws Exception {
    return TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.auth.token", token, "agentscope.training.auth.protect-reads", protectReads))
        .withFallback(TestDatabases.node(TestDatabases.h2(Files.createTempDirectory("otl-auth-")), true)));
  }

  @Test
  void writesNeedTheTokenAndReadsStayOpenByDefault() throws Exception {
    try (TrainingNode node = node("s3cret-token", false)) {
      Http anonymous = new Http(node.httpPort());
      Http.Response missing = anonymous.post("/v1/sessions/s1/events", BODY);
      assertEquals(401, missing.status());
      assertEquals("unauthorized", missing.json().get("error").asText());
      assertTrue(missing.headers().firstValue("WWW-Authenticate").orElse("").startsWith("Bearer"));
      Http.Response wrong = new Http(node.httpPort()).withToken("guess").post("/v1/sessions/s1/events", BODY);
      assertEquals(401, wrong.status());
      assertFalse(wrong.body().contains("s3cret-token"));
      assertEquals("the bearer token is wrong", wrong.json().get("message").asText());
      // curl -u user:token sends the right token under the Basic scheme: the scheme is what to fix.
      String basic = "Basic " + java.util.Base64.getEncoder().encodeToString(
          "user:s3cret-token".getBytes(java.nio.charset.StandardCharsets.UTF_8));
      Http.Response otherScheme = anonymous.postWithHeaders("/v1/sessions/s1/events",
          BODY.getBytes(java.nio.charset.StandardCharsets.UTF_8), "Authorization", basic);
      assertEquals(401, otherScheme.status());
      assertEquals("the Authorization header does not use the Bearer scheme; send Authorization: Bearer <token>",
          otherScheme.json().get("message").asText());
      assertFalse(otherScheme.body().contains(basic.substring(6)), "the credential is not echoed");
      assertEquals(404, anonymous.get("/v1/sessions/s1").status(), "nothing was stored by refused writes");
      Http authorized = new Http(node.httpPort()).withToken("s3cret-token");
      assertEquals(202, authorized.post("/v1/sessions/s1/events", BODY).status());
      assertEquals(200, anonymous.get("/v1/sessions/s1").status());
      assertEquals(200, anonymous.get("/health/ready").status());
      // The seed article's root feedback paths sit behind the same token as their /v1 twins.
      assertEquals(401, anonymous.post("/feedback/rate?sessionId=s1&score=4", null).status());
      assertEquals(401, anonymous.post("/feedback/thumbs?sessionId=s1&helpful=true", null).status());
      assertEquals(0, anonymous.get("/v1/sessions/s1").json().get("feedback").size(), "refused feedback stored nothing");
      assertEquals(200, authorized.post("/feedback/rate?sessionId=s1&score=4", null).status());
    }
  }

  @Test
  void readsNeedTheTokenWhenProtected() throws Exception {
    try (TrainingNode node = node("another-token", true)) {
      assertEquals(401, new Http(node.httpPort()).get("/v1/sessions/s1").status());
      assertEquals(404, new Http(node.httpPort()).withToken("another-token").get("/v1/sessions/s1").status());
      assertEquals(200, new Http(node.httpPort()).get("/health/live").status(), "health stays open for probes");
    }
  }

  /** A typo is not a credentials problem: unknown paths are 404 with or without the token. */
  @Test
  void unknownPathsAreNotFoundWhetherOrNotTheTokenIsSent() throws Exception {
    try (TrainingNode node = node("path-token", true)) {
      Http anonymous = new Http(node.httpPort());
      Http authorized = new Http(node.httpPort()).withToken("path-token");
      Http wrong = new Http(node.httpPort()).withToken("guess");
      for (String path : new String[] {"/v1/nope", "/v1/sessions/s1/events/extra", "/feedback/anything",
          "/feedback/rate/extra", "/v1/feedback", "/nope"}) {
        for (Http client : new Http[] {anonymous, wrong, authorized}) {
          for (Http.Response r : new Http.Response[] {client.get(path), client.post(path, BODY)}) {
            assertEquals(404, r.status(), path + " → " + r.body());
            assertEquals("not_found", r.json().get("error").asText(), path + " → " + r.body());
          }
        }
      }
      // Known paths still need the token, whatever the method or id.
      assertEquals(401, anonymous.post("/v1/sessions/anything/events", BODY).status());
      assertEquals(401, wrong.post("/feedback/thumbs?sessionId=s1&helpful=true", null).status());
      assertEquals(401, anonymous.get("/v1/jobs").status());
      assertEquals(401, anonymous.send("DELETE", "/v1/sessions/s1", null).status());
      assertEquals(401, anonymous.send("PUT", "/v1/training/a/policy", "{}").status());
      assertEquals(0, authorized.get("/v1/jobs").json().get("jobs").size(), "refused requests started nothing");
    }
  }

  /**
   * Lock-out hardening: a write with a wrong token is answered from its headers. The body declared
   * here (900 kB, under the 1 MiB limit) never comes: a node that read it first waited for it until
   * its request timeout (20 s), so a flood of such requests held every in-flight slot.
   */
  @Test
  void aWriteWithAWrongTokenIsRefusedBeforeItsBodyIsRead() throws Exception {
    try (TrainingNode node = node("body-token", false)) {
      long start = System.nanoTime();
      for (String auth : new String[] {"", "Authorization: Bearer guess\r\n"}) {
        try (java.net.Socket s = io.otl.node.testing.RawHttp.open(node.httpPort(), 5_000)) {
          s.getOutputStream().write(("POST /v1/sessions/s-big/events HTTP/1.1\r\nHost: x\r\n" + auth
              + "Content-Type: application/json\r\nContent-Length: 900000\r\n\r\n"
              + BODY.substring(0, 40)).getBytes(java.nio.charset.StandardCharsets.UTF_8));
          s.getOutputStream().flush();
          // Without the fix this read times out: the node waits for the other 899,960 bytes.
          io.otl.node.testing.RawHttp.Answer a = io.otl.node.testing.RawHttp.read(s.getInputStream());
          assertEquals(401, a.status(), a.head() + a.body());
          assertTrue(a.body().contains("\"unauthorized\""), a.body());
          assertTrue(a.head().toLowerCase().contains("connection: close"), a.head());
        }
      }
      assertTrue(System.nanoTime() - start < java.util.concurrent.TimeUnit.SECONDS.toNanos(4), "answered at once");
      // A whole body with a wrong token, then the right one, on one kept-alive connection.
      try (java.net.Socket s = io.otl.node.testing.RawHttp.open(node.httpPort(), 5_000)) {
        int length = BODY.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        for (String token : new String[] {"guess", "body-token"}) {
          // Head and body in one write: the node has the whole request (a strict entity) at once.
          s.getOutputStream().write(("POST /v1/sessions/s-big/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
              + token + "\r\nContent-Type: application/json\r\nContent-Length: " + length + "\r\n\r\n" + BODY)
              .getBytes(java.nio.charset.StandardCharsets.UTF_8));
          s.getOutputStream().flush();
          io.otl.node.testing.RawHttp.Answer a = io.otl.node.testing.RawHttp.read(s.getInputStream());
          assertEquals(token.equals("guess") ? 401 : 202, a.status(), a.head() + a.body());
        }
      }
      Http anonymous = new Http(node.httpPort());
      assertEquals(1, anonymous.get("/v1/sessions/s-big").json().get("messages").size(),
          "only the authorized write was stored");
    }
  }

  @Test
  void withoutATokenEverythingIsOpen() throws Exception {
    try (TrainingNode node = node("", false)) {
      assertEquals(202, new Http(node.httpPort()).post("/v1/sessions/s1/events", BODY).status());
    }
  }
}
