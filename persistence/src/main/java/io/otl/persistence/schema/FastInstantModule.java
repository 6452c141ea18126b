package io.otl.persistence.schema;

import com.fasterxml.jackson.annotation.JsonFormat;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.BeanProperty;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.deser.ContextualDeserializer;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import com.fasterxml.jackson.databind.jsontype.TypeDeserializer;
import com.fasterxml.jackson.databind.jsontype.TypeSerializer;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.ContextualSerializer;
import com.fasterxml.jackson.databind.ser.std.StdSerializer;
import com.fasterxml.jackson.datatype.jsr310.deser.InstantDeserializer;
import com.fasterxml.jackson.datatype.jsr310.ser.InstantSerializer;
import java.io.IOException;
import java.time.Instant;

/**
 * Instants of persisted types through {@link IsoInstants}: the same JSON as jackson-datatype-jsr310
 * writes with {@code WRITE_DATES_AS_TIMESTAMPS} off (Pekko's setting), and the same values read, at a
 * fraction of the cost. Everything else (timestamps on, a {@code @JsonFormat} on the property, text
 * not in ISO_INSTANT's own form, numbers) goes to jsr310's serializer and deserializer unchanged.
 */
final class FastInstantModule extends SimpleModule {
  FastInstantModule() {
    super("otl-fast-instant");
    addSerializer(Instant.class, new Writer(InstantSerializer.INSTANCE));
    addDeserializer(Instant.class, new Reader(InstantDeserializer.INSTANT));
  }

  private static boolean isDefault(JsonFormat.Value format) {
    return format == null || format.equals(JsonFormat.Value.empty());
  }

  static final class Writer extends StdSerializer<Instant> implements ContextualSerializer {
    private final JsonSerializer<Instant> jsr310;

    Writer(JsonSerializer<Instant> jsr310) {
      super(Instant.class);
      this.jsr310 = jsr310;
    }

    @Override
    public void serialize(Instant value, JsonGenerator gen, SerializerProvider provider) throws IOException {
      if (!provider.isEnabled(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)) {
        char[] text = new char[30];
        int n = IsoInstants.format(value, text);
        if (n > 0) {
          gen.writeString(text, 0, n);
          return;
        }
      }
      jsr310.serialize(value, gen, provider);
    }

    @Override
    public void serializeWithType(Instant value, JsonGenerator gen, SerializerProvider provider, TypeSerializer ts)
        throws IOException {
      jsr310.serializeWithType(value, gen, provider, ts);
    }

    @Override
    @SuppressWarnings("unchecked")
    public JsonSerializer<?> createContextual(SerializerProvider provider, BeanProperty property)
        throws JsonMappingException {
      // A property (or a config override) asking for a format of its own: jsr310 alone knows how.
      if (!isDefault(findFormatOverrides(provider, property, Instant.class))) {
        return ((ContextualSerializer) jsr310).createContextual(provider, property);
      }
      return this;
    }
  }

  static final class Reader extends StdDeserializer<Instant> implements ContextualDeserializer {
    private final JsonDeserializer<Instant> jsr310;

    Reader(JsonDeserializer<Instant> jsr310) {
      super(Instant.class);
      this.jsr310 = jsr310;
    }

    @Override
    public Instant deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
      if (p.hasToken(JsonToken.VALUE_STRING)) {
        Instant fast = IsoInstants.parse(p.getText());
        if (fast != null) return fast;
      }
      return jsr310.deserialize(p, ctxt);
    }

    @Override
    public Object deserializeWithType(JsonParser p, DeserializationContext ctxt, TypeDeserializer td)
        throws IOException {
      return jsr310.deserializeWithType(p, ctxt, td);
    }

    @Override
    public JsonDeserializer<?> createContextual(DeserializationContext ctxt, BeanProperty property)
        throws JsonMappingException {
      if (!isDefault(findFormatOverrides(ctxt, property, Instant.class))) {
        return ((ContextualDeserializer) jsr310).createContextual(ctxt, property);
      }
      return this;
    }
  }
}
