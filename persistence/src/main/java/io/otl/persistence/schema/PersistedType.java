package io.otl.persistence.schema;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.UnaryOperator;

/**
 * One persisted type: its logical name (what the journal stores as manifest, with the version), the
 * class it reads into today, the class name release v0.1.0 stored for it (null for types added
 * later), and the migrations that bring older JSON up to the current version.
 *
 * @param version the current version: 1 + the number of migrations
 * @param upcasts upcasts.get(i) turns version i + 1 into version i + 2
 */
public record PersistedType(
    String name, Class<?> type, String legacyManifest, int version, List<UnaryOperator<ObjectNode>> upcasts) {

  public PersistedType {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
    if (!name.matches("[a-z][a-z0-9-]*(\\.[a-z][a-z0-9-]*)+")) {
      throw new IllegalArgumentException("logical name '" + name + "' must look like 'entity.event-name'");
    }
    upcasts = List.copyOf(upcasts);
    if (version != upcasts.size() + 1) throw new IllegalArgumentException(name + ": version must be 1 + migrations");
  }

  /** A new type at version 1. */
  public static PersistedType of(String name, Class<?> type) {
    return new PersistedType(name, type, null, 1, List.of());
  }

  /** The same type, also read from rows release v0.1.0 stored under its class name then. */
  public PersistedType legacy(String className) {
    return new PersistedType(name, type, className, version, upcasts);
  }

  /**
   * The next version: JSON stored at the current version is turned into the new shape by {@code
   * upcast} on read (rename a field, add a default, split a value). Chain one per change.
   */
  public PersistedType migrate(UnaryOperator<ObjectNode> upcast) {
    List<UnaryOperator<ObjectNode>> next = new ArrayList<>(upcasts);
    next.add(upcast);
    return new PersistedType(name, type, legacyManifest, version + 1, next);
  }

  /** What the serializer writes as manifest: {@code name#version}. */
  public String manifest() {
    return name + "#" + version;
  }

  /** Brings JSON written at {@code fromVersion} to the current version. */
  public ObjectNode upcast(int fromVersion, ObjectNode json) {
    ObjectNode out = json;
    for (int v = fromVersion; v < version; v++) out = upcasts.get(v - 1).apply(out);
    return out;
  }
}
