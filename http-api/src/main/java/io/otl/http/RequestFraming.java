package io.otl.http;

import org.apache.pekko.util.ByteString;

/**
 * Follows one connection's request bytes, as pekko-http's parser frames them, so that each request head can be
 * read whole ({@link RequestHead}) before the parser sees it: a head is held back until its empty line, then
 * handed on (changed only when {@link RequestHead} must); a body passes through untouched, counted by its
 * Content-Length or by its chunks. Whatever it cannot follow exactly (a head {@link RequestHead.Body#UNFOLLOWED},
 * a malformed chunk, a head longer than the parser would take, a WebSocket upgrade) it hands on unread from there to
 * the connection's end: pekko-http refuses and closes such a connection, and a body is never read as a head.
 *
 * <p>Not thread-safe: one per connection, fed in order.
 */
final class RequestFraming {
  private enum State { HEAD, LENGTH_BODY, CHUNK_SIZE, CHUNK_DATA, CHUNK_END, TRAILERS, UNREAD }

  /** A chunk-size line longer than this is not one pekko-http takes (its max-chunk-ext-length is 256). */
  private static final int MAX_CHUNK_SIZE_LINE = 4096;

  private final int maxHead;
  private State state = State.HEAD;
  /** The head, chunk-size line or trailer section read so far. */
  private ByteString held = ByteString.emptyByteString();
  /** In a head or trailer section: no byte but CR since the last line end. */
  private boolean lineEmpty = true;
  private long remaining;
  private boolean upgrade;

  /** @param maxHead the longest head the parser accepts; a longer one is handed on unread (the parser refuses it) */
  RequestFraming(int maxHead) {
    this.maxHead = maxHead;
  }

  /** The bytes to hand to the parser for these, in order; empty while a head is incomplete. */
  ByteString next(ByteString in) {
    ByteString out = ByteString.emptyByteString();
    int i = 0;
    int n = in.size();
    while (i < n) {
      switch (state) {
        case UNREAD -> {
          return out.concat(in.drop(i));
        }
        case HEAD, TRAILERS -> {
          if (state == State.HEAD && held.isEmpty() && lineEmpty && isLineEnd(in.apply(i))) {
            out = out.concat(in.slice(i, i + 1)); // an empty line before a request line: the parser's to judge
            i++;
            continue;
          }
          int end = sectionEnd(in, i);
          if (end < 0) {
            held = held.concat(in.drop(i));
            i = n;
            if (held.size() > maxHead) out = out.concat(giveUp());
          } else {
            ByteString section = held.concat(in.slice(i, end));
            held = ByteString.emptyByteString();
            i = end;
            out = out.concat(state == State.HEAD ? head(section) : trailers(section));
          }
        }
        case LENGTH_BODY, CHUNK_DATA -> {
          int take = (int) Math.min(remaining, n - i);
          out = out.concat(in.slice(i, i + take));
          i += take;
          remaining -= take;
          if (remaining == 0) state = state == State.LENGTH_BODY ? afterMessage() : State.CHUNK_END;
        }
        case CHUNK_END -> {
          byte b = in.apply(i);
          out = out.concat(in.slice(i, i + 1));
          i++;
          if (b == '\n') state = State.CHUNK_SIZE;
          else if (b != '\r') state = State.UNREAD;
        }
        case CHUNK_SIZE -> {
          int lf = in.indexOf((byte) '\n', i);
          if (lf < 0) {
            held = held.concat(in.drop(i));
            i = n;
            if (held.size() > MAX_CHUNK_SIZE_LINE) out = out.concat(giveUp());
          } else {
            ByteString line = held.concat(in.slice(i, lf + 1));
            held = ByteString.emptyByteString();
            i = lf + 1;
            out = out.concat(line);
            chunkSize(line);
          }
        }
        default -> throw new IllegalStateException(state.name());
      }
    }
    return out;
  }

  /** What is held back when the client's bytes end: handed on for the parser to judge. */
  ByteString finish() {
    ByteString rest = held;
    held = ByteString.emptyByteString();
    return rest;
  }

  private ByteString head(ByteString section) {
    RequestHead head = RequestHead.read(section);
    upgrade = head.upgrade;
    switch (head.body) {
      case LENGTH -> {
        remaining = head.contentLength;
        state = State.LENGTH_BODY;
      }
      case CHUNKED -> state = State.CHUNK_SIZE;
      case UNFOLLOWED -> state = State.UNREAD;
      case NONE -> state = afterMessage();
      default -> throw new IllegalStateException(head.body.name());
    }
    return head.bytes;
  }

  private ByteString trailers(ByteString section) {
    state = afterMessage();
    return RequestHead.trailers(section);
  }

  private State afterMessage() {
    lineEmpty = true;
    return upgrade ? State.UNREAD : State.HEAD;
  }

  private ByteString giveUp() {
    state = State.UNREAD;
    return finish();
  }

  /** Reads a chunk-size line (size, optional extensions, line end); sets the state for what follows it. */
  private void chunkSize(ByteString line) {
    String text = line.utf8String().strip();
    int semicolon = text.indexOf(';');
    String hex = (semicolon < 0 ? text : text.substring(0, semicolon)).strip();
    if (hex.isEmpty() || hex.length() > 15 || !hex.chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
      state = State.UNREAD;
      return;
    }
    remaining = Long.parseLong(hex, 16);
    if (remaining > 0) {
      state = State.CHUNK_DATA;
    } else {
      state = State.TRAILERS;
      lineEmpty = true;
    }
  }

  /**
   * The index after the empty line that ends a head or trailer section, scanning from {@code from} with the
   * line state carried over from earlier bytes; -1 if the section goes on past these bytes.
   */
  private int sectionEnd(ByteString in, int from) {
    for (int i = from; i < in.size(); i++) {
      byte b = in.apply(i);
      if (b == '\n') {
        if (lineEmpty) return i + 1;
        lineEmpty = true;
      } else if (b != '\r') {
        lineEmpty = false;
      }
    }
    return -1;
  }

  private static boolean isLineEnd(byte b) {
    return b == '\r' || b == '\n';
  }
}
