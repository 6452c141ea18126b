package io.otl.persistence.schema;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.NotSerializableException;
import java.io.UncheckedIOException;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

/**
 * JSON of persisted types under logical manifests ({@code name#version}), and the reading of
 * older rows: JSON of an older version is upcast by the type's migrations; rows of release v0.1.0
 * (class-name manifests) are version 1 of the type registered with that legacy name. The JSON
 * itself is what the {@code jackson-json} binding wrote, through the same mapper, so only the
 * manifest changed. Payloads above 32 KiB are gzipped, as jackson-json does.
 */
public final class PersistedCodec {
  static final int COMPRESS_LARGER_THAN = 32 * 1024;

  private final ObjectMapper mapper;
  private final PersistedTypes types;
  /** A reader and a writer per class, resolved once instead of per row. */
  private final ClassValue<ObjectReader> readers;
  private final ClassValue<ObjectWriter> writers;
  /** The manifest per class: Pekko asks for it with every row written, and {@code name#version} was built anew each time. */
  private final ClassValue<String> manifests;

  /**
   * @param mapper the binding's mapper; the codec uses a copy of it with {@link FastInstantModule}
   *     (same JSON, cheaper instants), so the binding's own mapper stays as Pekko configured it
   */
  public PersistedCodec(ObjectMapper mapper, PersistedTypes types) {
    ObjectMapper own = mapper.copy().registerModule(new FastInstantModule());
    this.mapper = own;
    this.types = types;
    this.readers = new ClassValue<>() {
      @Override
      protected ObjectReader computeValue(Class<?> c) {
        return own.readerFor(c);
      }
    };
    this.writers = new ClassValue<>() {
      @Override
      protected ObjectWriter computeValue(Class<?> c) {
        return own.writerFor(c);
      }
    };
    this.manifests = new ClassValue<>() {
      @Override
      protected String computeValue(Class<?> c) {
        return typeOf(c).manifest();
      }
    };
  }

  public PersistedTypes types() {
    return types;
  }

  public String manifest(Object o) {
    return manifests.get(o.getClass());
  }

  public byte[] toBinary(Object o) {
    type(o);
    try {
      byte[] json = writers.get(o.getClass()).writeValueAsBytes(o);
      return json.length > COMPRESS_LARGER_THAN ? gzip(json) : json;
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot serialize " + o.getClass().getName() + ": " + e.getMessage(), e);
    }
  }

  /**
   * Reads a row: {@code manifest} is {@code name#version}, a bare logical name (version 1) or a
   * class name release v0.1.0 stored (version 1 of the type registered with it).
   */
  public Object fromBinary(byte[] bytes, String manifest) throws NotSerializableException {
    int hash = manifest.lastIndexOf('#');
    PersistedType type;
    int version = 1;
    if (hash > 0) {
      type = types.byName(manifest.substring(0, hash)).orElse(null);
      try {
        version = Integer.parseInt(manifest.substring(hash + 1));
      } catch (NumberFormatException e) {
        throw new NotSerializableException("bad version in manifest '" + manifest + "'");
      }
    } else {
      type = types.byName(manifest).or(() -> types.byLegacyManifest(manifest)).orElse(null);
    }
    if (type == null) {
      // An operator who rolled the binary back meets this first (trial t128): say so, and what to do.
      throw new NotSerializableException("no persisted type is registered for manifest '" + manifest
          + "' (io.otl.persistence.schema.PersistedTypes): a later build of the node wrote it; run that build "
          + "or a later one on this journal (docs/schema-evolution.md, rolling the binary back)");
    }
    if (version < 1 || version > type.version()) {
      throw new NotSerializableException("'" + manifest + "' was written by a newer release: this one reads "
          + type.name() + " up to version " + type.version());
    }
    try {
      byte[] json = gunzipIfNeeded(bytes);
      // Rows of the current version (nearly all) are bound in one pass; only older ones go through
      // a tree, which their migrations edit. Same result, half the parsing on every replay and query.
      if (version == type.version()) return readers.get(type.type()).readValue(json);
      JsonNode tree = mapper.readTree(json);
      if (!(tree instanceof ObjectNode object)) {
        throw new NotSerializableException(type.name() + "#" + version + " is not a JSON object; cannot migrate it");
      }
      return mapper.treeToValue(type.upcast(version, object), type.type());
    } catch (NotSerializableException e) {
      throw e;
    } catch (IOException e) {
      NotSerializableException n = new NotSerializableException("cannot read " + manifest + ": " + e.getMessage());
      n.initCause(e);
      throw n;
    }
  }

  private PersistedType type(Object o) {
    return typeOf(o.getClass());
  }

  private PersistedType typeOf(Class<?> c) {
    return types.byClass(c).orElseThrow(() -> new IllegalArgumentException(
        c.getName() + " implements io.otl.core.Persisted but has no logical name: add "
            + PersistedTypes.suggestedLine(c)
            + " to io.otl.persistence.schema.PersistedTypes.ALL (docs/schema-evolution.md)"));
  }

  static byte[] gzip(byte[] bytes) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(bytes.length / 4 + 64);
    try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
      gz.write(bytes);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  static byte[] gunzipIfNeeded(byte[] bytes) throws IOException {
    if (bytes.length < 2 || (bytes[0] & 0xff) != 0x1f || (bytes[1] & 0xff) != 0x8b) return bytes;
    try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(bytes))) {
      return in.readAllBytes();
    }
  }
}
