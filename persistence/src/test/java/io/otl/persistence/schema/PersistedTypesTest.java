package io.otl.persistence.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.Persisted;
import io.otl.persistence.golden.GoldenFiles;
import java.io.IOException;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The registry is complete: every class that can reach the journal (implements {@link Persisted})
 * has a logical name, every registered type has a golden fixture, and every row of the golden
 * journals names a registered type.
 */
class PersistedTypesTest {
  @Test
  void everyPersistedClassHasALogicalName() throws Exception {
    List<String> missing = new ArrayList<>();
    for (Class<?> c : persistedClasses()) {
      if (PersistedTypes.ALL.byClass(c).isEmpty()) {
        missing.add("  " + PersistedTypes.suggestedLine(c));
      }
    }
    assertTrue(missing.isEmpty(), "persisted classes without a logical name; add to "
        + "io.otl.persistence.schema.PersistedTypes.ALL (docs/schema-evolution.md):\n" + String.join("\n", missing));
  }

  @Test
  void theSuggestedNameFollowsTheRegistrysConvention() {
    assertEquals("session.message-recorded", PersistedTypes.suggestedName(
        io.otl.core.session.AgentSession.MessageRecorded.class));
  }

  @Test
  void theScanSeesTheEntitiesOfBothModules() throws Exception {
    Set<String> names = new TreeSet<>();
    for (Class<?> c : persistedClasses()) names.add(c.getName());
    assertTrue(names.contains("io.otl.core.session.AgentSession$MessageRecorded"), names.toString());
    assertTrue(names.contains("io.otl.persistence.readside.FeedOffsetStore$State"), names.toString());
    assertEquals(PersistedTypes.ALL.all().size(), names.size(), "registered types vs classes found: " + names);
  }

  @Test
  void everyRegisteredTypeHasAGoldenFixture() {
    Set<String> manifests = goldenManifests().keySet();
    List<String> missing = new ArrayList<>();
    for (PersistedType t : PersistedTypes.ALL.all()) {
      boolean found = (t.legacyManifest() != null && manifests.contains(t.legacyManifest())) || manifests.stream()
          .anyMatch(m -> m.equals(t.name()) || m.startsWith(t.name() + "#"));
      if (!found) missing.add("  " + t.name() + " (" + t.type().getName() + ")");
    }
    assertTrue(missing.isEmpty(), "persisted types without a golden fixture: make GoldenJournalGenerator write "
        + "them, then run it under a new name (docs/schema-evolution.md, \"The golden journal\"):\n"
        + "  mvn -B -o -pl persistence -am test -Dtest=GoldenJournalGenerator "
        + "-Dsurefire.failIfNoSpecifiedTests=false -Dotl.golden.release=v<next>-<topic>\n"
        + String.join("\n", missing));
  }

  @Test
  void everyGoldenRowNamesARegisteredType() {
    List<String> unknown = new ArrayList<>();
    goldenManifests().forEach((manifest, where) -> {
      int hash = manifest.lastIndexOf('#');
      String name = hash > 0 ? manifest.substring(0, hash) : manifest;
      if (PersistedTypes.ALL.byName(name).isEmpty() && PersistedTypes.ALL.byLegacyManifest(manifest).isEmpty()) {
        unknown.add("  " + manifest + " in " + where);
      }
    });
    assertTrue(unknown.isEmpty(), "golden rows no registered type reads (a legacy name or logical name was "
        + "removed from PersistedTypes; they must stay forever):\n" + String.join("\n", unknown));
  }

  /** Manifest → the fixture it was first seen in, over every golden release. */
  private static Map<String, String> goldenManifests() {
    Map<String, String> out = new TreeMap<>();
    List<String> releases = GoldenFiles.releases();
    assertTrue(releases.contains("v0.1.0"), "golden releases: " + releases);
    for (String release : releases) {
      for (String entity : GoldenFiles.ENTITIES) {
        GoldenFiles.Fixture f = GoldenFiles.read(release, entity);
        String where = "golden/" + release + "/" + entity + ".json";
        f.rows().forEach(r -> out.putIfAbsent(r.manifest(), where));
        f.snapshots().forEach(sn -> out.putIfAbsent(sn.manifest(), where));
      }
    }
    return out;
  }

  /** Concrete classes implementing Persisted in the modules that hold entities (core-actors, persistence). */
  private static List<Class<?>> persistedClasses() throws IOException, URISyntaxException {
    List<Class<?>> out = new ArrayList<>();
    for (Class<?> anchor : List.of(Persisted.class, PersistedTypes.class)) {
      Path location = Path.of(anchor.getProtectionDomain().getCodeSource().getLocation().toURI());
      if (Files.isDirectory(location)) {
        scan(location, out);
      } else {
        try (FileSystem jar = FileSystems.newFileSystem(location)) {
          scan(jar.getPath("/"), out);
        }
      }
    }
    return out;
  }

  private static void scan(Path root, List<Class<?>> out) throws IOException {
    try (Stream<Path> files = Files.walk(root)) {
      for (Path p : (Iterable<Path>) files::iterator) {
        String rel = root.relativize(p).toString().replace('\\', '/');
        if (!rel.endsWith(".class") || !rel.startsWith("io/otl/") || rel.endsWith("module-info.class")) continue;
        String className = rel.substring(0, rel.length() - ".class".length()).replace('/', '.');
        Class<?> c;
        try {
          c = Class.forName(className, false, PersistedTypesTest.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
          continue;
        }
        if (Persisted.class.isAssignableFrom(c) && !c.isInterface() && !Modifier.isAbstract(c.getModifiers())) {
          out.add(c);
        }
      }
    }
  }
}
