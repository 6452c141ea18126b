package io.otl.persistence.golden;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.GZIPInputStream;

/**
 * The golden journal's fixture files: one JSON file per entity type and release under
 * {@code src/test/resources/golden/<release>/}, holding the journal and snapshot rows exactly as
 * stored (serializer id, manifest, payload bytes in base64, plus the payload as JSON for review),
 * and the state each persistence id reaches after replaying them.
 */
public final class GoldenFiles {
  static final ObjectMapper JSON = new ObjectMapper()
      .enable(SerializationFeature.INDENT_OUTPUT)
      .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS);

  /** Entity types (persistence id prefixes) in every golden release. */
  public static final List<String> ENTITIES = List.of(
      "AgentSession", "TrainingCoordinator", "ModelVersion", "KafkaOffset", "FeedOffset");

  private GoldenFiles() {}

  public record Row(String persistenceId, long sequenceNumber, boolean deleted, int serializerId, String manifest,
      String adapterManifest, List<String> tags, byte[] payload) {}

  public record Snapshot(String persistenceId, long sequenceNumber, long created, int serializerId, String manifest,
      byte[] payload) {}

  public record Fixture(String release, String entity, List<Row> rows, List<Snapshot> snapshots,
      Map<String, JsonNode> states) {}

  /** The releases with a golden journal (the folders under golden/), sorted by name. */
  public static List<String> releases() {
    try {
      java.net.URL url = GoldenFiles.class.getClassLoader().getResource("golden");
      if (url == null) throw new IllegalStateException("no golden/ folder among the test resources");
      try (java.util.stream.Stream<Path> dirs = Files.list(Path.of(url.toURI()))) {
        return dirs.filter(Files::isDirectory).map(d -> d.getFileName().toString()).sorted().toList();
      }
    } catch (IOException | java.net.URISyntaxException e) {
      throw new IllegalStateException("cannot list the golden journals", e);
    }
  }

  static String resource(String release, String entity) {
    return "golden/" + release + "/" + entity + ".json";
  }

  // ---------------------------------------------------------------- reading the database

  /** Every journal row and snapshot of persistence ids starting with {@code entity|}, in order. */
  static Fixture dump(Connection c, String release, String entity, Map<String, JsonNode> states)
      throws SQLException {
    List<Row> rows = new ArrayList<>();
    String prefix = entity + "|%";
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT ordering, persistence_id, sequence_number, deleted, event_ser_id, event_ser_manifest,"
            + " adapter_manifest, event_payload FROM event_journal WHERE persistence_id LIKE ?"
            + " ORDER BY persistence_id, sequence_number")) {
      ps.setString(1, prefix);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(new Row(rs.getString(2), rs.getLong(3), rs.getBoolean(4), rs.getInt(5), rs.getString(6),
              rs.getString(7), tags(c, rs.getLong(1)), rs.getBytes(8)));
        }
      }
    }
    List<Snapshot> snapshots = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT persistence_id, sequence_number, created, snapshot_ser_id, snapshot_ser_manifest, snapshot_payload"
            + " FROM snapshot WHERE persistence_id LIKE ? ORDER BY persistence_id, sequence_number")) {
      ps.setString(1, prefix);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          snapshots.add(new Snapshot(rs.getString(1), rs.getLong(2), rs.getLong(3), rs.getInt(4), rs.getString(5),
              rs.getBytes(6)));
        }
      }
    }
    return new Fixture(release, entity, rows, snapshots, states);
  }

  private static List<String> tags(Connection c, long ordering) throws SQLException {
    List<String> out = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement("SELECT tag FROM event_tag WHERE event_id = ? ORDER BY tag")) {
      ps.setLong(1, ordering);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) out.add(rs.getString(1));
      }
    }
    return out;
  }

  // ---------------------------------------------------------------- writing the database

  /** Inserts the fixture's rows (with their tags) and snapshots, as the journal plugin would have. */
  static void load(Connection c, Fixture f) throws SQLException {
    boolean auto = c.getAutoCommit();
    c.setAutoCommit(false);
    try (PreparedStatement ev = c.prepareStatement(
            "INSERT INTO event_journal(persistence_id, sequence_number, deleted, writer, write_timestamp,"
                + " adapter_manifest, event_ser_id, event_ser_manifest, event_payload) VALUES (?,?,?,?,?,?,?,?,?)",
            Statement.RETURN_GENERATED_KEYS);
        PreparedStatement tag = c.prepareStatement("INSERT INTO event_tag(event_id, tag) VALUES (?,?)");
        PreparedStatement sn = c.prepareStatement(
            "INSERT INTO snapshot(persistence_id, sequence_number, created, snapshot_ser_id, snapshot_ser_manifest,"
                + " snapshot_payload) VALUES (?,?,?,?,?,?)")) {
      for (Row r : f.rows()) {
        ev.setString(1, r.persistenceId());
        ev.setLong(2, r.sequenceNumber());
        ev.setBoolean(3, r.deleted());
        ev.setString(4, "golden-" + f.release());
        ev.setLong(5, 0L);
        ev.setString(6, r.adapterManifest() == null ? "" : r.adapterManifest());
        ev.setInt(7, r.serializerId());
        ev.setString(8, r.manifest());
        ev.setBytes(9, r.payload());
        ev.executeUpdate();
        long ordering;
        try (ResultSet keys = ev.getGeneratedKeys()) {
          keys.next();
          ordering = keys.getLong(1);
        }
        for (String t : r.tags()) {
          tag.setLong(1, ordering);
          tag.setString(2, t);
          tag.executeUpdate();
        }
      }
      for (Snapshot s : f.snapshots()) {
        sn.setString(1, s.persistenceId());
        sn.setLong(2, s.sequenceNumber());
        sn.setLong(3, s.created());
        sn.setInt(4, s.serializerId());
        sn.setString(5, s.manifest());
        sn.setBytes(6, s.payload());
        sn.executeUpdate();
      }
      c.commit();
    } catch (SQLException e) {
      c.rollback();
      throw e;
    } finally {
      c.setAutoCommit(auto);
    }
  }

  // ---------------------------------------------------------------- the fixture file

  static void write(Path resources, Fixture f) throws IOException {
    ObjectNode root = JsonNodeFactory.instance.objectNode();
    root.put("release", f.release());
    root.put("entity", f.entity());
    root.put("note", "Written by io.otl.persistence.golden.GoldenJournalGenerator; never edit by hand "
        + "(docs/schema-evolution.md). payloadBase64 holds the exact bytes; payload is the same, as JSON.");
    ArrayNode rows = root.putArray("rows");
    for (Row r : f.rows()) {
      ObjectNode n = rows.addObject();
      n.put("persistenceId", r.persistenceId());
      n.put("sequenceNumber", r.sequenceNumber());
      if (r.deleted()) n.put("deleted", true);
      n.put("serializerId", r.serializerId());
      n.put("manifest", r.manifest());
      if (r.adapterManifest() != null && !r.adapterManifest().isEmpty()) n.put("adapterManifest", r.adapterManifest());
      ArrayNode tags = n.putArray("tags");
      r.tags().forEach(tags::add);
      n.set("payload", readable(r.payload()));
      n.put("payloadBase64", Base64.getEncoder().encodeToString(r.payload()));
    }
    ArrayNode snaps = root.putArray("snapshots");
    for (Snapshot s : f.snapshots()) {
      ObjectNode n = snaps.addObject();
      n.put("persistenceId", s.persistenceId());
      n.put("sequenceNumber", s.sequenceNumber());
      n.put("created", s.created());
      n.put("serializerId", s.serializerId());
      n.put("manifest", s.manifest());
      n.set("payload", readable(s.payload()));
      n.put("payloadBase64", Base64.getEncoder().encodeToString(s.payload()));
    }
    ObjectNode states = root.putObject("states");
    new TreeMap<>(f.states()).forEach(states::set);
    Path file = resources.resolve(resource(f.release(), f.entity()));
    Files.createDirectories(file.getParent());
    Files.writeString(file, JSON.writeValueAsString(sorted(root)) + "\n", StandardCharsets.UTF_8);
  }

  public static Fixture read(String release, String entity) {
    String name = resource(release, entity);
    try (InputStream in = GoldenFiles.class.getClassLoader().getResourceAsStream(name)) {
      if (in == null) throw new IllegalStateException("missing golden fixture " + name);
      JsonNode root = JSON.readTree(in);
      List<Row> rows = new ArrayList<>();
      for (JsonNode n : root.get("rows")) {
        List<String> tags = new ArrayList<>();
        n.get("tags").forEach(t -> tags.add(t.asText()));
        rows.add(new Row(n.get("persistenceId").asText(), n.get("sequenceNumber").asLong(),
            n.path("deleted").asBoolean(false), n.get("serializerId").asInt(), n.get("manifest").asText(),
            n.path("adapterManifest").asText(""), tags, Base64.getDecoder().decode(n.get("payloadBase64").asText())));
      }
      List<Snapshot> snapshots = new ArrayList<>();
      for (JsonNode n : root.get("snapshots")) {
        snapshots.add(new Snapshot(n.get("persistenceId").asText(), n.get("sequenceNumber").asLong(),
            n.get("created").asLong(), n.get("serializerId").asInt(), n.get("manifest").asText(),
            Base64.getDecoder().decode(n.get("payloadBase64").asText())));
      }
      Map<String, JsonNode> states = new TreeMap<>();
      root.get("states").fields().forEachRemaining(e -> states.put(e.getKey(), e.getValue()));
      return new Fixture(root.get("release").asText(), entity, rows, snapshots, states);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read golden fixture " + name, e);
    }
  }

  /** The payload as JSON (gunzipped when the serializer compressed it). */
  static JsonNode readable(byte[] payload) {
    try {
      byte[] bytes = payload;
      if (payload.length > 2 && (payload[0] & 0xff) == 0x1f && (payload[1] & 0xff) == 0x8b) {
        try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(payload))) {
          bytes = in.readAllBytes();
        }
      }
      return JSON.readTree(bytes);
    } catch (IOException e) {
      return JsonNodeFactory.instance.textNode("(not JSON: " + e.getMessage() + ")");
    }
  }

  /** A copy with every object's keys in alphabetical order: a stable rendering for review and diffs. */
  static JsonNode sorted(JsonNode node) {
    if (node.isObject()) {
      ObjectNode out = JsonNodeFactory.instance.objectNode();
      TreeMap<String, JsonNode> fields = new TreeMap<>();
      for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        fields.put(e.getKey(), sorted(e.getValue()));
      }
      fields.forEach(out::set);
      return out;
    }
    if (node.isArray()) {
      ArrayNode out = JsonNodeFactory.instance.arrayNode();
      node.forEach(n -> out.add(sorted(n)));
      return out;
    }
    return node;
  }
}
