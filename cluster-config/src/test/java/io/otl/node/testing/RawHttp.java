package io.otl.node.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;

/**
 * HTTP/1.1 over a plain socket, for what well-behaved clients never send: bodies that stop half
 * way, bodies trickled byte by byte, oversized headers and URIs, illegal header values.
 */
public final class RawHttp {
  private RawHttp() {}

  /** Status line's code and the body, as received; status -1 when the server closed without answering. */
  public record Answer(int status, String head, String body) {}

  /** Sends {@code head} (request line and headers, without the blank line) and {@code body}, reads the answer. */
  public static Answer exchange(int port, String head, byte[] body, int readTimeoutMillis) throws IOException {
    try (Socket s = open(port, readTimeoutMillis)) {
      OutputStream out = s.getOutputStream();
      out.write((head + "\r\n\r\n").getBytes(StandardCharsets.UTF_8));
      if (body != null) out.write(body);
      out.flush();
      return read(s.getInputStream());
    }
  }

  /** Sends the head and {@code partial} of a longer declared body, then closes without reading. */
  public static void abort(int port, String head, byte[] partial) throws IOException {
    try (Socket s = open(port, 5_000)) {
      OutputStream out = s.getOutputStream();
      out.write((head + "\r\n\r\n").getBytes(StandardCharsets.UTF_8));
      out.write(partial);
      out.flush();
    }
  }

  /**
   * Sends the head with {@code Expect: 100-continue}, waits for the node's {@code 100 Continue} (sent
   * when a route starts reading the body, so the reset below lands mid-upload, never before the
   * request is parsed), sends {@code partial} of the longer declared body and resets the connection
   * (RST, as a killed client or a proxy dropping it does), without reading. Returns 100, or the status
   * the node answered instead of asking for the body.
   */
  public static int resetMidBody(int port, String head, byte[] partial) throws IOException {
    try (Socket s = open(port, 10_000)) {
      OutputStream out = s.getOutputStream();
      out.write((head + "\r\nExpect: 100-continue\r\n\r\n").getBytes(StandardCharsets.UTF_8));
      out.flush();
      InputStream in = s.getInputStream();
      ByteArrayOutputStream line = new ByteArrayOutputStream();
      for (int b = in.read(); b != -1 && b != '\n'; b = in.read()) line.write(b);
      String status = line.toString(StandardCharsets.ISO_8859_1);
      int code = status.startsWith("HTTP/1.1 ") ? Integer.parseInt(status.substring(9, 12)) : -1;
      if (code != 100) return code;
      out.write(partial);
      out.flush();
      s.setSoLinger(true, 0);
      return code;
    }
  }

  /**
   * Sends {@code request} as it is (bytes no client library would send) and returns everything answered until the
   * server closes the connection or {@code readTimeoutMillis} pass without a byte: every answer, so that a body read
   * as a second request shows as a second status line.
   */
  public static String untilClosed(int port, byte[] request, int readTimeoutMillis) throws IOException {
    try (Socket s = open(port, readTimeoutMillis)) {
      s.getOutputStream().write(request);
      s.getOutputStream().flush();
      ByteArrayOutputStream in = new ByteArrayOutputStream();
      byte[] chunk = new byte[8192];
      try {
        for (int n; (n = s.getInputStream().read(chunk)) > 0; ) in.write(chunk, 0, n);
      } catch (java.net.SocketTimeoutException | SocketException e) {
        // what arrived is what was answered
      }
      return in.toString(StandardCharsets.ISO_8859_1);
    }
  }

  /**
   * A request whose header {@code X-Note} holds the single byte 0xE9 (Latin-1 'é', no UTF-8) right before its
   * Content-Length, and whose body is a second, complete request ({@code GET /health/live}).
   */
  public static byte[] latin1HeaderBeforeContentLength(String method, String path, String contentType) {
    byte[] smuggled = "GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    ByteArrayOutputStream request = new ByteArrayOutputStream();
    request.writeBytes((method + " " + path + " HTTP/1.1\r\nHost: x\r\nX-Note: ").getBytes(StandardCharsets.US_ASCII));
    request.write(0xE9);
    request.writeBytes(("\r\nContent-Length: " + smuggled.length + "\r\nContent-Type: " + contentType + "\r\n\r\n")
        .getBytes(StandardCharsets.US_ASCII));
    request.writeBytes(smuggled);
    return request.toByteArray();
  }

  public static Socket open(int port, int readTimeoutMillis) throws IOException {
    Socket s = new Socket();
    s.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
    s.setSoTimeout(readTimeoutMillis);
    return s;
  }

  /** Reads an answer until the server closes the connection or the declared body length is read. */
  public static Answer read(InputStream in) throws IOException {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    byte[] chunk = new byte[8192];
    int headEnd = -1;
    int length = -1;
    try {
      for (int n; (n = in.read(chunk)) > 0; ) {
        buf.write(chunk, 0, n);
        String text = buf.toString(StandardCharsets.ISO_8859_1);
        if (headEnd < 0 && (headEnd = text.indexOf("\r\n\r\n")) >= 0) {
          for (String line : text.substring(0, headEnd).split("\r\n")) {
            if (line.toLowerCase().startsWith("content-length:")) length = Integer.parseInt(line.substring(15).trim());
          }
        }
        if (headEnd >= 0 && length >= 0 && buf.size() >= headEnd + 4 + length) break;
      }
    } catch (SocketException e) {
      // A reset after the answer was sent: what arrived is the answer.
    }
    String text = buf.toString(StandardCharsets.UTF_8);
    if (text.isEmpty() || !text.startsWith("HTTP/1.1 ")) return new Answer(-1, text, "");
    int end = text.indexOf("\r\n\r\n");
    return new Answer(Integer.parseInt(text.substring(9, 12)), end < 0 ? text : text.substring(0, end),
        end < 0 ? "" : text.substring(end + 4));
  }
}
