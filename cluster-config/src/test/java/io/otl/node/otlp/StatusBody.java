package io.otl.node.otlp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.CodedInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/** A protobuf {@code google.rpc.Status} answer, read field by field as an OTLP exporter reads it. */
final class StatusBody {
  private StatusBody() {}

  /** The message of the Status {@code body}, or null without one. */
  static String message(byte[] body) throws IOException {
    CodedInputStream in = CodedInputStream.newInstance(body);
    for (int tag; (tag = in.readTag()) != 0; ) {
      if (tag == ((2 << 3) | 2)) return in.readString();
      in.skipField(tag);
    }
    return null;
  }

  /** {@code body} is a Status of {@code code} whose message contains {@code inMessage}. */
  static void assertStatus(byte[] body, int code, String inMessage) throws IOException {
    CodedInputStream in = CodedInputStream.newInstance(body);
    int readCode = -1;
    String message = null;
    for (int tag; (tag = in.readTag()) != 0; ) {
      if (tag == (1 << 3)) {
        readCode = in.readInt32();
      } else if (tag == ((2 << 3) | 2)) {
        message = in.readString();
      } else {
        in.skipField(tag);
      }
    }
    assertEquals(code, readCode, new String(body, StandardCharsets.UTF_8));
    assertTrue(message != null && message.contains(inMessage), String.valueOf(message));
  }
}
