package io.otl.persistence.schema;

import java.io.NotSerializableException;
import java.util.Optional;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.serialization.jackson.JacksonObjectMapperProvider;
import org.apache.pekko.serialization.jackson.JacksonSerializer;

/**
 * Pekko's {@code jackson-json} serializer (same id, 31; same mapper; same output), except that a
 * row whose manifest is a class name release v0.1.0 stored for a persisted type is read through
 * {@link PersistedTypes}: by its logical type, into whatever class has that name now, with the
 * type's migrations applied. Journals written before logical names keep their serializer id, so
 * this is how they stay readable after classes move or change (docs/schema-evolution.md).
 * Everything else (commands and replies between nodes) is plain jackson-json.
 */
public final class LegacyJacksonJsonSerializer extends JacksonSerializer {
  private final PersistedCodec codec;

  public LegacyJacksonJsonSerializer(ExtendedActorSystem system, String bindingName) {
    super(system, bindingName,
        JacksonObjectMapperProvider.get(system).getOrCreate(bindingName, Optional.empty()));
    this.codec = new PersistedCodec(objectMapper(), PersistedTypes.ALL);
  }

  @Override
  public Object fromBinary(byte[] bytes, String manifest) {
    if (codec.types().byLegacyManifest(manifest).isEmpty()) return super.fromBinary(bytes, manifest);
    try {
      return codec.fromBinary(bytes, manifest);
    } catch (NotSerializableException e) {
      return rethrow(e);
    }
  }

  /** Pekko expects NotSerializableException (checked) from a Scala method that declares nothing. */
  @SuppressWarnings("unchecked")
  private static <T extends Throwable> Object rethrow(Throwable t) throws T {
    throw (T) t;
  }
}
