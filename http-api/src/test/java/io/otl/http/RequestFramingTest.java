package io.otl.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.Test;

/**
 * The bytes {@link RequestFraming} hands to pekko-http's parser: heads made UTF-8, an HTTP/1.0 chunked head marked,
 * bodies untouched however they are split, and nothing read after what it cannot follow.
 */
class RequestFramingTest {
  private static final byte[] LATIN1_LAST_HEADER =
      "GET /health/live HTTP/1.1\r\nHost: x\r\nX-Session-Id: caf\u00e9\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1);

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.ISO_8859_1);
  }

  private static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] p : parts) out.writeBytes(p);
    return out.toByteArray();
  }

  /** What the parser gets for {@code in} fed {@code step} bytes at a time, then the client's end. */
  private static byte[] framed(byte[] in, int step) {
    RequestFraming framing = new RequestFraming(64 * 1024);
    ByteString out = ByteString.emptyByteString();
    for (int i = 0; i < in.length; i += step) {
      out = out.concat(framing.next(ByteString.fromArray(in, i, Math.min(step, in.length - i))));
    }
    return out.concat(framing.finish()).toArray();
  }

  private static void sameAtEverySplit(byte[] in, byte[] expected) {
    for (int step : new int[] {1, 2, 3, 7, 64, in.length}) {
      assertArrayEquals(expected, framed(in, step), "fed " + step + " bytes at a time");
    }
  }

  @Test
  void aByteThatIsNotUtf8InTheLastHeaderBecomesTheReplacementCharacter() {
    byte[] expected = bytes("GET /health/live HTTP/1.1\r\nHost: x\r\nX-Session-Id: caf\u00ef\u00bf\u00bd\r\n\r\n");
    sameAtEverySplit(LATIN1_LAST_HEADER, expected);
    assertEquals("caf\ufffd", new String(expected, StandardCharsets.UTF_8).split("X-Session-Id: ")[1].strip());
  }

  @Test
  void wellFormedUtf8AndAsciiHeadsPassUnchanged() {
    byte[] head = "POST /v1/x HTTP/1.1\r\nHost: x\r\nX-Name: caf\u00e9 \u20ac \ud83d\ude00\r\nContent-Length: 0\r\n\r\n"
        .getBytes(StandardCharsets.UTF_8);
    sameAtEverySplit(head, head);
  }

  @Test
  void bodiesPassUntouchedEvenWhenTheyLookLikeHeadsWithLatin1() {
    byte[] body = concat(bytes("\r\n\r\nGET / HTTP/1.1\r\nX: \u00e9\r\n\r\n"), new byte[] {(byte) 0xE9, 0, (byte) 0xFF});
    byte[] lengthRequest = concat(bytes("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: " + body.length + "\r\n\r\n"), body);
    byte[] chunk = concat(bytes(Integer.toHexString(body.length) + ";ext=1\r\n"), body, bytes("\r\n0\r\n\r\n"));
    byte[] chunkedRequest = concat(bytes("POST /b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n"), chunk);
    byte[] in = concat(lengthRequest, chunkedRequest, LATIN1_LAST_HEADER);
    byte[] expected = concat(lengthRequest, chunkedRequest,
        bytes("GET /health/live HTTP/1.1\r\nHost: x\r\nX-Session-Id: caf\u00ef\u00bf\u00bd\r\n\r\n"));
    sameAtEverySplit(in, expected);
  }

  @Test
  void anHttp10ChunkedHeadGoesOnAsHttp11WithTheRefusalMark() {
    byte[] in = bytes("POST /v1/sessions/s/events HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n");
    String out = new String(framed(in, 5), StandardCharsets.ISO_8859_1);
    assertTrue(out.startsWith("POST /v1/sessions/s/events HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
        + RequestHead.REFUSAL_HEADER + ": "), out);
    assertTrue(out.endsWith("\r\n\r\n2\r\n{}\r\n0\r\n\r\n"), out);
  }

  @Test
  void lineFeedOnlyHeadsAndEmptyLinesBeforeARequestAreFollowed() {
    byte[] in = bytes("\r\nPOST /a HTTP/1.1\nHost: x\nContent-Length: 3\n\n\n\nxGET / HTTP/1.1\nX: \u00e9\n\n");
    byte[] expected = bytes("\r\nPOST /a HTTP/1.1\nHost: x\nContent-Length: 3\n\n\n\nxGET / HTTP/1.1\nX: \u00ef\u00bf\u00bd\n\n");
    sameAtEverySplit(in, expected);
  }

  @Test
  void afterWhatItCannotFollowNothingIsRead() {
    String[] unfollowed = {
      "POST /a HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n",
      "POST /a HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
      "POST /a HTTP/1.1\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n",
      "POST /a HTTP/1.1\r\n folded\r\n\r\n",
      "POST /a HTTP/1.1\r\nContent-Length: 2\r\n 2\r\n\r\n",
      "POST /a HTTP/2.0\r\n\r\n",
      "GET /socket HTTP/1.1\r\nUpgrade: websocket\r\n\r\n",
      "POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    };
    byte[] after = bytes("GET / HTTP/1.1\r\nX: \u00e9\r\n\r\n");
    for (String head : unfollowed) {
      byte[] in = concat(bytes(head), after);
      assertArrayEquals(in, framed(in, 4), head);
    }
  }

  @Test
  void aContentLengthRepeatedWithTheSameValueIsFollowed() {
    // pekko-http takes it as one (and goes on with the connection): the heads after its body must still be read.
    byte[] request = bytes("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 003\r\n\r\nabc");
    byte[] expected = concat(request,
        bytes("GET /health/live HTTP/1.1\r\nHost: x\r\nX-Session-Id: caf\u00ef\u00bf\u00bd\r\n\r\n"));
    sameAtEverySplit(concat(request, LATIN1_LAST_HEADER), expected);
  }

  @Test
  void headsAfterAnUpgradeToAProtocolOtherThanWebSocketAreStillRead() {
    // curl --http2 on plain HTTP asks for h2c on every request; pekko-http's HTTP/1.1 layer never switches to it
    // (only a route's WebSocket answer does), so the connection stays HTTP/1.1 and its next heads must be read.
    byte[] upgrade = bytes("GET /a HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
        + "HTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n");
    byte[] expected = concat(upgrade,
        bytes("GET /health/live HTTP/1.1\r\nHost: x\r\nX-Session-Id: caf\u00ef\u00bf\u00bd\r\n\r\n"));
    sameAtEverySplit(concat(upgrade, LATIN1_LAST_HEADER), expected);
  }

  @Test
  void aHeadLongerThanTheParserTakesIsHandedOnUnread() {
    RequestFraming framing = new RequestFraming(32);
    byte[] in = bytes("GET / HTTP/1.1\r\nX-Long: " + "a".repeat(40) + "\u00e9\r\n\r\n");
    ByteString out = ByteString.emptyByteString();
    for (int i = 0; i < in.length; i += 8) {
      out = out.concat(framing.next(ByteString.fromArray(in, i, Math.min(8, in.length - i))));
    }
    assertArrayEquals(in, out.toArray(), "held no more than 32 bytes, then handed on as it came");
  }

  @Test
  void anIncompleteHeadIsHeldUntilTheClientsEnd() {
    RequestFraming framing = new RequestFraming(1024);
    assertEquals(0, framing.next(ByteString.fromArray(bytes("GET / HTTP/1.1\r\nHost: x\r\n"))).size());
    assertEquals("GET / HTTP/1.1\r\nHost: x\r\n", framing.finish().utf8String());
  }

  @Test
  void aFoldedOrdinaryHeaderIsFollowedAsPekkoHttpReadsIt() {
    byte[] in = bytes("POST /a HTTP/1.1\r\nX-A: a\r\n b\r\nContent-Length: 2\r\n\r\n\u00e9\u00e9GET / HTTP/1.1\r\nX: \u00e9\r\n\r\n");
    byte[] expected = bytes("POST /a HTTP/1.1\r\nX-A: a\r\n b\r\nContent-Length: 2\r\n\r\n\u00e9\u00e9GET / HTTP/1.1\r\nX: "
        + "\u00ef\u00bf\u00bd\r\n\r\n");
    sameAtEverySplit(in, expected);
  }
}
