package io.otl.persistence.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.fasterxml.jackson.annotation.JsonFormat;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.deser.BeanDeserializerBase;
import com.fasterxml.jackson.databind.deser.DefaultDeserializationContext;
import com.fasterxml.jackson.databind.ser.BeanPropertyWriter;
import com.fasterxml.jackson.databind.ser.std.BeanSerializerBase;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The fast instants write what jsr310 writes and read what it reads, byte for byte and value for value. */
class FastInstantModuleTest {
  record Stamped(String id, Instant at, Instant recordedAt) {}

  record Formatted(@JsonFormat(shape = JsonFormat.Shape.NUMBER) Instant at) {}

  private static ObjectMapper pekkoLike() {
    return JsonMapper.builder().addModule(new JavaTimeModule())
        .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS).build();
  }

  private static Instant randomInstant(Random random) {
    long second = (long) (random.nextDouble() * 253_402_300_799L);
    int nano = switch (random.nextInt(4)) {
      case 0 -> 0;
      case 1 -> random.nextInt(1000) * 1_000_000;
      case 2 -> random.nextInt(1_000_000) * 1_000;
      default -> random.nextInt(1_000_000_000);
    };
    return Instant.ofEpochSecond(second, nano);
  }

  @Test
  void formatsAsIsoInstantDoes() {
    Random random = new Random(18);
    for (int i = 0; i < 100_000; i++) {
      Instant t = randomInstant(random);
      assertEquals(DateTimeFormatter.ISO_INSTANT.format(t), IsoInstants.format(t));
    }
    for (Instant t : new Instant[] {Instant.EPOCH, Instant.ofEpochSecond(-1), Instant.MIN, Instant.MAX,
        Instant.parse("9999-12-31T23:59:59.999999999Z"), Instant.parse("+10000-01-01T00:00:00Z"),
        Instant.parse("2024-02-29T12:00:00.000100Z")}) {
      assertEquals(DateTimeFormatter.ISO_INSTANT.format(t), IsoInstants.format(t));
    }
  }

  @Test
  void parsesWhatItWritesAndLeavesEveryOtherFormToTheJdk() {
    Random random = new Random(7);
    for (int i = 0; i < 100_000; i++) {
      Instant t = randomInstant(random);
      String text = DateTimeFormatter.ISO_INSTANT.format(t);
      assertEquals(t, IsoInstants.parse(text), text);
    }
    assertEquals(Instant.parse("2026-12-01T10:05:11.1Z"), IsoInstants.parse("2026-12-01T10:05:11.1Z"));
    assertEquals(Instant.parse("2026-12-01T10:05:11.12345Z"), IsoInstants.parse("2026-12-01T10:05:11.12345Z"));
    for (String other : new String[] {"2026-12-01T10:05:11+01:00", "2026-12-01t10:05:11z", "2026-02-30T10:05:11Z",
        "2026-12-01T23:59:60Z", "2026-12-01T24:00:00Z", "1969-12-31T23:59:59Z", "+12026-12-01T10:05:11Z",
        "2026-12-01T10:05:11.Z", "2026-12-01T10:05:11.1234567890Z", "2026-1a-01T10:05:11Z", "1700000000",
        "2026-12-01 10:05:11Z", "2026-13-01T10:05:11Z", "2026-12-01T10:-5:11Z"}) {
      assertNull(IsoInstants.parse(other), other);
    }
  }

  @Test
  void theCodecsMapperWritesAndReadsTheSameJsonAsPekkosMapper() throws Exception {
    ObjectMapper jsr310 = pekkoLike();
    ObjectMapper fast = pekkoLike().registerModule(new FastInstantModule());
    Random random = new Random(3);
    for (int i = 0; i < 10_000; i++) {
      Stamped s = new Stamped("e" + i, randomInstant(random), i % 7 == 0 ? null : randomInstant(random));
      String json = jsr310.writeValueAsString(s);
      assertEquals(json, fast.writeValueAsString(s));
      assertEquals(s, fast.readValue(json, Stamped.class));
    }
    // Forms only the JDK path reads: an offset, a number of seconds, an instant before 1970.
    String offset = "{\"id\":\"x\",\"at\":\"2026-12-01T11:05:11+01:00\",\"recordedAt\":1700000000.5}";
    assertEquals(jsr310.readValue(offset, Stamped.class), fast.readValue(offset, Stamped.class));
    String old = "{\"id\":\"x\",\"at\":\"1969-07-20T20:17:40Z\",\"recordedAt\":null}";
    assertEquals(jsr310.readValue(old, Stamped.class), fast.readValue(old, Stamped.class));
  }

  @Test
  void theRecordsPropertiesUseTheFastPathAndAFormattedOneDoesNot() throws Exception {
    ObjectMapper fast = pekkoLike().registerModule(new FastInstantModule());
    assertEquals(FastInstantModule.Writer.class, propertySerializer(fast, Stamped.class, "at").getClass());
    assertEquals(FastInstantModule.Reader.class, propertyDeserializer(fast, Stamped.class, "at").getClass());
    assertNotEquals(FastInstantModule.Writer.class, propertySerializer(fast, Formatted.class, "at").getClass());
    assertNotEquals(FastInstantModule.Reader.class, propertyDeserializer(fast, Formatted.class, "at").getClass());
  }

  private static Object propertySerializer(ObjectMapper mapper, Class<?> type, String property) throws Exception {
    var bean = (BeanSerializerBase) mapper.getSerializerProviderInstance().findTypedValueSerializer(type, true, null);
    for (var it = bean.properties(); it.hasNext(); ) {
      var writer = (BeanPropertyWriter) it.next();
      if (writer.getName().equals(property)) return writer.getSerializer();
    }
    throw new AssertionError("no property " + property);
  }

  private static Object propertyDeserializer(ObjectMapper mapper, Class<?> type, String property) throws Exception {
    var context = ((DefaultDeserializationContext) mapper.getDeserializationContext())
        .createDummyInstance(mapper.getDeserializationConfig());
    var bean = (BeanDeserializerBase) context.findRootValueDeserializer(mapper.constructType(type));
    return bean.findProperty(property).getValueDeserializer();
  }

  @Test
  void timestampsAndPropertyFormatsStayWithJsr310() throws Exception {
    Stamped s = new Stamped("e", Instant.parse("2026-12-01T10:05:11.123Z"), null);
    ObjectMapper timestamps = JsonMapper.builder().addModule(new JavaTimeModule()).build();
    assertEquals(timestamps.writeValueAsString(s),
        timestamps.copy().registerModule(new FastInstantModule()).writeValueAsString(s));
    Formatted f = new Formatted(Instant.parse("2026-12-01T10:05:11.123Z"));
    ObjectMapper fast = pekkoLike().registerModule(new FastInstantModule());
    assertEquals(pekkoLike().writeValueAsString(f), fast.writeValueAsString(f));
    assertEquals(f, fast.readValue(fast.writeValueAsString(f), Formatted.class));
  }
}
