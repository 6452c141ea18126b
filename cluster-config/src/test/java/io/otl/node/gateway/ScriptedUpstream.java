package io.otl.node.gateway;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A model server written down byte by byte, for what the simulator does not do: a 200 stream whose
 * connection is cut after some events (a vLLM worker dying mid-answer), or answers in a shape the
 * simulator does not give (vLLM's reasoning fields). Each request is answered with {@code chunks} as HTTP/1.1 chunked
 * SSE ({@code pauseMs} between chunks), then the stream is terminated properly, or, with {@code cut}, the socket is closed without
 * the last chunk. {@link #then} queues scripts for the next requests, one each (an SDK's retry after a failed
 * call gets the next one); with none queued, a request gets the one {@link #answer} set.
 */
final class ScriptedUpstream implements AutoCloseable {
  /**
   * What one request gets: SSE chunks (or one JSON body when {@code json}), and whether the stream is cut;
   * {@code status} other than 200: that status with the chunks as its JSON body.
   */
  record Script(List<String> chunks, boolean cut, boolean json, long pauseMs, int status) {
    Script(List<String> chunks, boolean cut, boolean json, long pauseMs) {
      this(chunks, cut, json, pauseMs, 200);
    }

    Script(List<String> chunks, boolean cut, boolean json) {
      this(chunks, cut, json, 0);
    }

    /** A whole JSON answer. */
    static Script json(String body) {
      return new Script(List.of(body), false, true);
    }

    /** An HTTP error with an OpenAI error body. */
    static Script status(int status) {
      return new Script(List.of("{\"error\":{\"message\":\"scripted failure\",\"type\":\"server_error\"}}"),
          false, true, 0, status);
    }
  }

  /** A model server's whole text answer, {@code id} prefixed with {@code chatcmpl-}, with its usage. */
  static String textAnswer(String id, String text) {
    return "{\"id\":\"chatcmpl-" + id + "\",\"object\":\"chat.completion\",\"created\":1,\"model\":\"m\","
        + "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"" + text + "\"},"
        + "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":9,\"total_tokens\":14}}";
  }

  /** One SSE event of a streamed answer: its {@code delta} as JSON, {@code finish} null until the last. */
  static String chunk(String id, String deltaJson, String finish) {
    return "data: {\"id\":\"" + id + "\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\","
        + "\"choices\":[{\"index\":0,\"delta\":" + deltaJson + ",\"logprobs\":null,\"finish_reason\":"
        + (finish == null ? "null" : "\"" + finish + "\"") + "}]}\n\n";
  }

  private final ServerSocket server;
  private volatile Script script = new Script(List.of(), false, false, 0);
  private final java.util.Queue<Script> queued = new java.util.concurrent.ConcurrentLinkedQueue<>();
  /** The request bodies received, in order. */
  final List<String> requests = new CopyOnWriteArrayList<>();

  ScriptedUpstream() throws IOException {
    server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread t = new Thread(this::accept, "scripted-upstream");
    t.setDaemon(true);
    t.start();
  }

  /** The OpenAI base URL to register as a version's endpoint. */
  String baseUrl() {
    return "http://127.0.0.1:" + server.getLocalPort() + "/v1";
  }

  void answer(Script next) {
    script = next;
  }

  /** The scripts of the next requests, in order, before the one {@link #answer} set. */
  void then(Script... next) {
    queued.addAll(List.of(next));
  }

  private void accept() {
    while (!server.isClosed()) {
      try {
        Socket s = server.accept();
        Thread t = new Thread(() -> serve(s), "scripted-upstream-conn");
        t.setDaemon(true);
        t.start();
      } catch (IOException e) {
        return;
      }
    }
  }

  private void serve(Socket socket) {
    try (socket) {
      InputStream in = socket.getInputStream();
      OutputStream out = socket.getOutputStream();
      while (true) {
        String head = readHead(in);
        if (head == null) return;
        int length = 0;
        for (String line : head.split("\r\n")) {
          if (line.toLowerCase().startsWith("content-length:")) length = Integer.parseInt(line.substring(15).trim());
        }
        requests.add(new String(in.readNBytes(length), StandardCharsets.UTF_8));
        Script next = queued.poll();
        Script s = next != null ? next : script;
        if (s.json()) {
          byte[] body = String.join("", s.chunks()).getBytes(StandardCharsets.UTF_8);
          out.write(("HTTP/1.1 " + s.status() + (s.status() == 200 ? " OK" : " Error")
              + "\r\nContent-Type: application/json\r\nContent-Length: " + body.length
              + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
          out.write(body);
          out.flush();
          continue;
        }
        out.write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
            .getBytes(StandardCharsets.US_ASCII));
        boolean first = true;
        for (String chunk : s.chunks()) {
          if (!first && s.pauseMs() > 0) pause(s.pauseMs());
          first = false;
          byte[] b = chunk.getBytes(StandardCharsets.UTF_8);
          out.write((Integer.toHexString(b.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
          out.write(b);
          out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
          out.flush();
        }
        if (s.cut()) return; // closed without the terminating chunk: the upstream died mid-answer
        out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
      }
    } catch (IOException e) {
      // the gateway went away: nothing to answer
    }
  }

  private static void pause(long ms) throws IOException {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    }
  }

  private static String readHead(InputStream in) throws IOException {
    StringBuilder head = new StringBuilder();
    int b;
    while ((b = in.read()) >= 0) {
      head.append((char) b);
      if (head.length() >= 4 && head.substring(head.length() - 4).equals("\r\n\r\n")) return head.toString();
    }
    return null;
  }

  @Override
  public void close() throws IOException {
    server.close();
  }
}
