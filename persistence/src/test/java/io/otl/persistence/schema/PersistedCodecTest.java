package io.otl.persistence.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.NotSerializableException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The migration mechanism on an example type whose class moved and whose shape changed twice: v1
 * {@code {"message", "n"}}, v2 renames message → text, v3 renames n → count and defaults it to 1.
 */
class PersistedCodecTest {
  record Greeting(String text, int count) {}

  record Unregistered(String x) {}

  static final PersistedType GREETING = PersistedType.of("test.greeting", Greeting.class)
      .legacy("io.otl.gone.Greeter$Greeting")
      .migrate(json -> {
        json.set("text", json.remove("message"));
        return json;
      })
      .migrate(json -> {
        json.put("count", json.has("n") ? json.remove("n").asInt() : 1);
        return json;
      });

  private final PersistedCodec codec =
      new PersistedCodec(new ObjectMapper(), new PersistedTypes(List.of(GREETING)));

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void writesTheLogicalNameWithTheCurrentVersionAndReadsItBack() throws Exception {
    Greeting g = new Greeting("hello", 3);
    assertEquals("test.greeting#3", codec.manifest(g));
    assertEquals(g, codec.fromBinary(codec.toBinary(g), codec.manifest(g)));
  }

  @Test
  void olderVersionsAreUpcastStepByStep() throws Exception {
    assertEquals(new Greeting("hi", 2), codec.fromBinary(utf8("{\"message\":\"hi\",\"n\":2}"), "test.greeting#1"));
    assertEquals(new Greeting("hi", 1), codec.fromBinary(utf8("{\"message\":\"hi\"}"), "test.greeting#1"));
    assertEquals(new Greeting("hi", 5), codec.fromBinary(utf8("{\"text\":\"hi\",\"n\":5}"), "test.greeting#2"));
    // a bare logical name is version 1
    assertEquals(new Greeting("yo", 1), codec.fromBinary(utf8("{\"message\":\"yo\"}"), "test.greeting"));
  }

  @Test
  void aRowStoredUnderAClassNameThatNoLongerExistsIsReadAsVersionOne() throws Exception {
    assertEquals(new Greeting("old", 4),
        codec.fromBinary(utf8("{\"message\":\"old\",\"n\":4}"), "io.otl.gone.Greeter$Greeting"));
  }

  @Test
  void rowsOfANewerReleaseOrOfAnUnknownTypeAreRefusedByName() {
    NotSerializableException newer = assertThrows(NotSerializableException.class,
        () -> codec.fromBinary(utf8("{}"), "test.greeting#4"));
    assertTrue(newer.getMessage().contains("newer release"), newer.getMessage());
    NotSerializableException unknown = assertThrows(NotSerializableException.class,
        () -> codec.fromBinary(utf8("{}"), "test.farewell#1"));
    assertTrue(unknown.getMessage().contains("test.farewell#1"), unknown.getMessage());
    assertTrue(unknown.getMessage().contains("a later build of the node wrote it"), "says what an operator who rolled back must do: " + unknown.getMessage());
  }

  @Test
  void anUnregisteredClassIsNotWrittenAndTheMessageSaysWhatToAdd() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> codec.toBinary(new Unregistered("x")));
    assertTrue(e.getMessage().contains("PersistedType.of(\"schema.unregistered\", "
        + "io.otl.persistence.schema.PersistedCodecTest.Unregistered.class),"), e.getMessage());
  }

  @Test
  void largePayloadsAreGzippedLikeJacksonJsonAndReadBack() throws Exception {
    Greeting big = new Greeting("x".repeat(40_000), 1);
    byte[] bytes = codec.toBinary(big);
    assertEquals(0x1f, bytes[0] & 0xff);
    assertEquals(0x8b, bytes[1] & 0xff);
    assertEquals(big, codec.fromBinary(bytes, codec.manifest(big)));
  }

  @Test
  void logicalNamesAreCheckedWhenRegistered() {
    assertThrows(IllegalArgumentException.class, () -> PersistedType.of("NoDots", Greeting.class));
    assertThrows(IllegalArgumentException.class, () -> new PersistedTypes(List.of(
        PersistedType.of("test.a", Greeting.class), PersistedType.of("test.a", Unregistered.class))));
  }
}
