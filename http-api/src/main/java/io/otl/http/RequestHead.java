package io.otl.http;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.HexFormat;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.util.ByteString;

/**
 * One request head as the client sent it (request line and header lines, up to and including the empty line),
 * read before pekko-http's parser for two things that parser gets wrong and no stage after it can mend
 * (docs/http-edge.md):
 *
 * <ul>
 *   <li>a byte that is not UTF-8 (Latin-1's {@code é}, as Python's {@code requests} sends it): pekko-http takes
 *       a byte from 0xC0 for the lead of a UTF-8 sequence and the bytes after it unchecked, so in the last header
 *       line it swallowed the line end and waited for more headers until idle-timeout. Each such byte becomes
 *       U+FFFD, which the routes refuse as any header outside ASCII (400, connection closed);
 *   <li>{@code HTTP/1.0} with {@code Transfer-Encoding: chunked}: pekko-http parses the pair, then fails building
 *       the request and answers its own 500. The head is handed on as HTTP/1.1 (so the chunked body is still read
 *       as chunks) with {@link #REFUSAL_HEADER}, which the routes answer 400.
 * </ul>
 *
 * <p>It also tells the framing what follows the head, mirroring pekko-http's rules; a head whose framing it cannot
 * follow exactly (a second Content-Length of another value, a coding other than chunked, a folded Content-Length or
 * Transfer-Encoding, a malformed line) is {@link Body#UNFOLLOWED}: pekko-http refuses those and closes the
 * connection, and nothing after it is touched.
 */
final class RequestHead {
  /** What follows a head on its connection. */
  enum Body { NONE, LENGTH, CHUNKED, UNFOLLOWED }

  /**
   * Added to an HTTP/1.0 chunked request's head. Its value is drawn once per JVM, so a client cannot name it in
   * a request of its own.
   */
  static final String REFUSAL_HEADER = "X-Otl-Edge-Refusal";
  private static final String REFUSAL_VALUE = HexFormat.of().formatHex(new SecureRandom().generateSeed(16));
  private static final byte[] REFUSAL_LINE =
      (REFUSAL_HEADER + ": " + REFUSAL_VALUE + "\r\n").getBytes(StandardCharsets.US_ASCII);
  private static final byte[] REPLACEMENT = {(byte) 0xEF, (byte) 0xBF, (byte) 0xBD};

  static final String HTTP10_CHUNKED_MESSAGE = "an HTTP/1.0 request cannot have a chunked body (Transfer-Encoding: "
      + "chunked is HTTP/1.1's); send the request as HTTP/1.1, or with a Content-Length; it was not processed";

  /** The head to hand to pekko-http's parser. */
  final ByteString bytes;
  final Body body;
  /** The body's length when {@link Body#LENGTH}. */
  final long contentLength;
  /**
   * An {@code Upgrade} header offering WebSocket: after this request's body the connection may speak it (a route's
   * WebSocket answer switches it). pekko-http's HTTP/1.1 layer switches to no other protocol: {@code Upgrade: h2c},
   * which curl --http2 sends on every plain-HTTP request, leaves the connection HTTP/1.1, and its next heads are read.
   */
  final boolean upgrade;

  private RequestHead(ByteString bytes, Body body, long contentLength, boolean upgrade) {
    this.bytes = bytes;
    this.body = body;
    this.contentLength = contentLength;
    this.upgrade = upgrade;
  }

  /** True for a request whose head this class marked for refusal (HTTP/1.0 with a chunked body). */
  static boolean refusedHttp10Chunked(HttpRequest request) {
    return request.getHeader(REFUSAL_HEADER).map(h -> h.value().equals(REFUSAL_VALUE)).orElse(false);
  }

  /** @param head a whole head, its last line the empty one */
  static RequestHead read(ByteString head) {
    byte[] raw = head.toArray();
    int requestLineEnd = indexOf(raw, 0, (byte) '\n');
    String requestLine = ascii(raw, 0, trimCr(raw, 0, requestLineEnd));
    String[] parts = requestLine.split(" ", -1);
    boolean http10 = parts.length == 3 && parts[2].equals("HTTP/1.0");
    if (parts.length != 3 || !http10 && !parts[2].equals("HTTP/1.1")) return unfollowed(head, raw);

    long contentLength = -1;
    boolean chunked = false;
    boolean upgrade = false;
    boolean framingHeader = false;
    boolean anyHeader = false;
    for (int start = requestLineEnd + 1; start < raw.length; ) {
      int end = indexOf(raw, start, (byte) '\n');
      int contentEnd = trimCr(raw, start, end);
      if (contentEnd == start) break; // the empty line
      if (raw[start] == ' ' || raw[start] == '\t') {
        // A folded line continues the header before it, as pekko-http reads it (and keeps the connection): only a
        // framing header's continuation would change how the body is counted.
        if (framingHeader || !anyHeader) return unfollowed(head, raw);
        start = end + 1;
        continue;
      }
      int colon = indexOf(raw, start, (byte) ':');
      if (colon > contentEnd || colon == start || !isToken(raw, start, colon)) return unfollowed(head, raw);
      boolean isLength = named(raw, start, colon, "content-length");
      boolean isCoding = !isLength && named(raw, start, colon, "transfer-encoding");
      framingHeader = isLength || isCoding;
      anyHeader = true;
      if (isLength || isCoding) {
        String value = ascii(raw, colon + 1, contentEnd).strip();
        if (chunked) return unfollowed(head, raw);
        if (isCoding) {
          if (contentLength >= 0 || !value.equalsIgnoreCase("chunked")) return unfollowed(head, raw);
          chunked = true;
        } else {
          if (value.isEmpty() || value.length() > 18 || !value.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return unfollowed(head, raw);
          }
          long length = Long.parseLong(value);
          // pekko-http takes a Content-Length repeated with the same value as one, and goes on with the connection.
          if (contentLength >= 0 && length != contentLength) return unfollowed(head, raw);
          contentLength = length;
        }
      } else if (named(raw, start, colon, "upgrade")) {
        upgrade |= offersWebSocket(ascii(raw, colon + 1, contentEnd));
      }
      start = end + 1;
    }

    Body body = chunked ? Body.CHUNKED : contentLength > 0 ? Body.LENGTH : Body.NONE;
    ByteString bytes = asUtf8(head, raw);
    if (chunked && http10) bytes = asHttp11WithRefusal(bytes.toArray());
    return new RequestHead(bytes, body, Math.max(contentLength, 0), upgrade);
  }

  /** Lines of a chunked body's trailer section, ending with the empty line: only made UTF-8. */
  static ByteString trailers(ByteString section) {
    byte[] raw = section.toArray();
    return asUtf8(section, raw);
  }

  /** An {@code Upgrade} value (a list of protocols, each perhaps with a version) naming WebSocket. */
  private static boolean offersWebSocket(String value) {
    for (String protocol : value.split(",")) {
      String name = protocol.strip();
      int slash = name.indexOf('/');
      if ((slash < 0 ? name : name.substring(0, slash)).strip().equalsIgnoreCase("websocket")) return true;
    }
    return false;
  }

  private static RequestHead unfollowed(ByteString head, byte[] raw) {
    return new RequestHead(asUtf8(head, raw), Body.UNFOLLOWED, 0, false);
  }

  /**
   * The head with {@code HTTP/1.1} for the request line's {@code HTTP/1.0} and the refusal header before the empty
   * line. The request line's last 8 bytes are its version (checked by {@link #read}); positions are found again in
   * the sanitized bytes, which may be longer.
   */
  private static ByteString asHttp11WithRefusal(byte[] head) {
    int requestLineEnd = indexOf(head, 0, (byte) '\n');
    int versionEnd = trimCr(head, 0, requestLineEnd);
    int lastLine = head.length - 1;
    if (lastLine > 0 && head[lastLine - 1] == '\r') lastLine--;
    byte[] out = new byte[head.length + REFUSAL_LINE.length];
    System.arraycopy(head, 0, out, 0, lastLine);
    out[versionEnd - 1] = '1'; // HTTP/1.0 -> HTTP/1.1
    System.arraycopy(REFUSAL_LINE, 0, out, lastLine, REFUSAL_LINE.length);
    System.arraycopy(head, lastLine, out, lastLine + REFUSAL_LINE.length, head.length - lastLine);
    return ByteString.fromArray(out);
  }

  static boolean validUtf8(byte[] b) {
    for (int i = 0; i < b.length; ) {
      int n = sequenceLength(b, i);
      if (n == 0) return false;
      i += n;
    }
    return true;
  }

  /** {@code bytes} (whose copy is {@code raw}) as they are when well-formed UTF-8, else {@link #sanitized}. */
  private static ByteString asUtf8(ByteString bytes, byte[] raw) {
    return validUtf8(raw) ? bytes : ByteString.fromArray(sanitized(raw));
  }

  /** The bytes with each byte that does not start a well-formed UTF-8 sequence replaced by U+FFFD. */
  private static byte[] sanitized(byte[] b) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(b.length + 16);
    for (int i = 0; i < b.length; ) {
      int n = sequenceLength(b, i);
      if (n == 0) {
        out.write(REPLACEMENT, 0, REPLACEMENT.length);
        i++;
      } else {
        out.write(b, i, n);
        i += n;
      }
    }
    return out.toByteArray();
  }

  /** The length of the well-formed UTF-8 sequence at {@code i} (RFC 3629's table), 0 if there is none. */
  private static int sequenceLength(byte[] b, int i) {
    int lead = b[i] & 0xFF;
    if (lead < 0x80) return 1;
    int n;
    int lo = 0x80;
    int hi = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) n = 2;
    else if (lead == 0xE0) { n = 3; lo = 0xA0; }
    else if (lead >= 0xE1 && lead <= 0xEC || lead == 0xEE || lead == 0xEF) n = 3;
    else if (lead == 0xED) { n = 3; hi = 0x9F; }
    else if (lead == 0xF0) { n = 4; lo = 0x90; }
    else if (lead >= 0xF1 && lead <= 0xF3) n = 4;
    else if (lead == 0xF4) { n = 4; hi = 0x8F; }
    else return 0;
    if (i + n > b.length) return 0;
    int second = b[i + 1] & 0xFF;
    if (second < lo || second > hi) return 0;
    for (int k = 2; k < n; k++) {
      int c = b[i + k] & 0xFF;
      if (c < 0x80 || c > 0xBF) return 0;
    }
    return n;
  }

  private static boolean isToken(byte[] b, int from, int to) {
    for (int i = from; i < to; i++) {
      int c = b[i] & 0xFF;
      boolean ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
          || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
      if (!ok) return false;
    }
    return true;
  }

  /** Whether the header name in {@code b[from, to)} is {@code lowerCaseName}, ignoring case (no copy: every head is read). */
  private static boolean named(byte[] b, int from, int to, String lowerCaseName) {
    if (to - from != lowerCaseName.length()) return false;
    for (int i = from; i < to; i++) {
      int c = b[i];
      if (c >= 'A' && c <= 'Z') c += 'a' - 'A';
      if (c != lowerCaseName.charAt(i - from)) return false;
    }
    return true;
  }

  /** The index of {@code c} from {@code from}, or the array's length. */
  private static int indexOf(byte[] b, int from, byte c) {
    for (int i = from; i < b.length; i++) if (b[i] == c) return i;
    return b.length;
  }

  /** The end of a line's content: before its CR, if the line ends CRLF. */
  private static int trimCr(byte[] b, int start, int lineEnd) {
    return lineEnd > start && b[lineEnd - 1] == '\r' ? lineEnd - 1 : lineEnd;
  }

  private static String ascii(byte[] b, int from, int to) {
    return new String(b, from, Math.max(0, to - from), StandardCharsets.ISO_8859_1);
  }
}
