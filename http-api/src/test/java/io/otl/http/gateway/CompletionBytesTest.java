package io.otl.http.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * A streamed answer reaches the gateway in network chunks that end wherever they end: inside a line,
 * and inside a character of several bytes. The recorded answer must be the text the model sent.
 */
class CompletionBytesTest {
  private static final String ANSWER = "你好，世界 🌍 — déjà vu";

  private static byte[] stream() {
    StringBuilder sse = new StringBuilder();
    for (String piece : new String[] {"你好，", "世界 🌍", " — déjà vu"}) {
      sse.append("data: {\"id\":\"r1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"").append(piece)
          .append("\"},\"finish_reason\":null}]}\n\n");
    }
    sse.append("data: {\"id\":\"r1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n");
    sse.append("data: [DONE]\n\n");
    return sse.toString().getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void aCharacterSplitAcrossChunksIsRecordedWhole() {
    byte[] all = stream();
    // Every cut point, so that each multi-byte character is split at each of its inner bytes once.
    for (int cut = 1; cut < all.length; cut++) {
      Completion c = new Completion(false);
      c.feed(Arrays.copyOfRange(all, 0, cut), System.nanoTime());
      c.feed(Arrays.copyOfRange(all, cut, all.length), System.nanoTime());
      assertEquals(ANSWER, c.content(), "cut after byte " + cut);
      assertTrue(c.finished(), "cut after byte " + cut);
      assertEquals("stop", c.finishReason());
    }
  }

  @Test
  void oneByteAtATimeGivesTheSameAnswer() {
    Completion c = new Completion(false);
    for (byte b : stream()) c.feed(new byte[] {b}, System.nanoTime());
    assertEquals(ANSWER, c.content());
    assertEquals("r1", c.id());
    assertTrue(c.finished());
  }

  @Test
  void bytesThatAreNotUtf8AreReadAsTheDecoderReplacesThem() {
    byte[] head = "data: {\"id\":\"r2\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a".getBytes(StandardCharsets.UTF_8);
    byte[] tail = "b\"},\"finish_reason\":\"stop\"}]}\n\n".getBytes(StandardCharsets.UTF_8);
    byte[] line = new byte[head.length + 1 + tail.length];
    System.arraycopy(head, 0, line, 0, head.length);
    line[head.length] = (byte) 0xff; // never valid in UTF-8
    System.arraycopy(tail, 0, line, head.length + 1, tail.length);
    Completion c = new Completion(false);
    c.feed(line, System.nanoTime());
    assertEquals("a\uFFFDb", c.content(), "the chunk is recorded, the bad byte replaced");
  }

  @Test
  void aLineOverTheLimitIsDroppedAndTheLinesAfterItAreRead() {
    Completion c = new Completion(false);
    c.feed("data: {\"id\":\"r3\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"".getBytes(StandardCharsets.UTF_8),
        System.nanoTime());
    byte[] mega = new byte[1 << 20];
    Arrays.fill(mega, (byte) 'a');
    for (int i = 0; i <= Completion.MAX_LINE_BYTES >> 20; i++) c.feed(mega, System.nanoTime());
    c.feed(("\"}}]}\n\ndata: {\"id\":\"r3\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"after\"},"
        + "\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n").getBytes(StandardCharsets.UTF_8), System.nanoTime());
    assertEquals("after", c.content(), "the overlong line is not recorded; the next one is");
    assertTrue(c.finished());
  }
}
