package io.otl.persistence.schema;

import java.io.NotSerializableException;
import java.util.Optional;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.serialization.SerializerWithStringManifest;
import org.apache.pekko.serialization.jackson.JacksonObjectMapperProvider;

/**
 * The serializer of {@link io.otl.core.Persisted} (binding {@code otl-persisted} in
 * serialization.conf): JSON under a logical manifest {@code name#version} from {@link
 * PersistedTypes}. It uses the ObjectMapper of the {@code jackson-json} binding, so the JSON is
 * byte for byte what release v0.1.0 wrote; only the manifest and the serializer id differ.
 */
public final class PersistedSerializer extends SerializerWithStringManifest {
  /** Stored in every journal and snapshot row it writes: never change it. */
  public static final int IDENTIFIER = 7417;

  private final PersistedCodec codec;

  public PersistedSerializer(ExtendedActorSystem system) {
    this.codec = new PersistedCodec(
        JacksonObjectMapperProvider.get(system).getOrCreate("jackson-json", Optional.empty()), PersistedTypes.ALL);
  }

  @Override
  public int identifier() {
    return IDENTIFIER;
  }

  @Override
  public String manifest(Object o) {
    return codec.manifest(o);
  }

  @Override
  public byte[] toBinary(Object o) {
    return codec.toBinary(o);
  }

  @Override
  public Object fromBinary(byte[] bytes, String manifest) throws NotSerializableException {
    return codec.fromBinary(bytes, manifest);
  }
}
