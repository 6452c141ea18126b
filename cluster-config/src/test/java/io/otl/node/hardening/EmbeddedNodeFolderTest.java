package io.otl.node.hardening;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import io.otl.node.TrainingNode;
import io.otl.node.readside.FeedTestSupport;
import io.otl.node.testing.TestDatabases;
import io.otl.node.testing.ToolRun;
import io.otl.node.testing.ToolsJournal;
import io.otl.persistence.DataFolder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.pekko.cluster.typed.Cluster;
import org.junit.jupiter.api.Test;

/**
 * A node on the embedded journal (issue #14 item 2), checked from the outside: the sockets it
 * listens on (read from /proc, as {@code ss -ltn} does), its data folder, a second node on the same
 * folder, and the command-line tools reading through it while it runs and from the file once it stopped.
 */
class EmbeddedNodeFolderTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void aNodeListensOnlyWhereTheReadmeSaysAndTheToolsGoThroughIt() throws Exception {
    ToolsJournal journal = ToolsJournal.create("embedded-node");
    Config db = journal.db();
    Path dir = journal.data();
    Path config = journal.config("node.conf");
    Path out = journal.out();

    Set<Integer> before = listeningPorts();
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(db, true))) {
      Set<Integer> opened = new HashSet<>(listeningPorts());
      opened.removeAll(before);
      int cluster = (Integer) Cluster.get(node.system()).selfMember().address().port().get();
      assertTrue(opened.contains(node.httpPort()), "HTTP listens: " + opened);
      assertTrue(Set.of(node.httpPort(), cluster).containsAll(opened),
          "no listener besides HTTP " + node.httpPort() + " and the cluster " + cluster + ": " + opened);

      assertEquals("rwx------", perms(dir));
      for (String f : List.of("journal.mv.db", "journal.password", DataFolder.LOCK, DataFolder.NODE_FILE)) {
        assertEquals("rw-------", perms(dir.resolve(f)), f);
      }
      JsonNode published = JSON.readTree(dir.resolve(DataFolder.NODE_FILE).toFile());
      assertEquals(node.httpPort(), published.get("httpPort").asInt());
      assertEquals(ProcessHandle.current().pid(), published.get("pid").asLong());

      IllegalStateException second = assertThrows(IllegalStateException.class,
          () -> TrainingNode.start(TestDatabases.node(db, true)));
      assertTrue(second.getMessage().contains(dir.toString())
          && second.getMessage().contains("pid " + ProcessHandle.current().pid()), second.getMessage());

      FeedTestSupport.completedSessions(node.dataCollector(), "folder", "agent-f", 3);

      ToolRun export = ToolRun.export("--agent", "agent-f", "--format", "rl", "--out", out.toString(), "--name", "live",
          "--config", config.toString());
      assertEquals(0, export.code(), export.err());
      assertTrue(export.out().contains("via node: http://127.0.0.1:" + node.httpPort()), export.out());
      assertFalse(export.out().contains("journal: "), export.out());
      assertEquals(3, Files.readAllLines(out.resolve("live.jsonl")).size());
      JsonNode manifest = JSON.readTree(out.resolve("live.manifest.json").toFile());
      assertEquals(Files.readAllLines(out.resolve("live.jsonl")).size(), manifest.get("count").asInt());

      // An export that selects nothing says where it read too: an empty selection from a node on another
      // database than the one meant is explained only by that line.
      ToolRun nothing = ToolRun.export("--agent", "agent-none", "--format", "rl", "--out", out.toString(), "--name",
          "none", "--config", config.toString());
      assertEquals(3, nothing.code(), nothing.err());
      assertTrue(nothing.out().contains("via node: http://127.0.0.1:" + node.httpPort()), nothing.out());

      ToolRun audit = ToolRun.audit("session", "folder-0", "--format", "json", "--config", config.toString());
      assertEquals(0, audit.code(), audit.err());
      JsonNode a = JSON.readTree(audit.out());
      assertEquals("SessionStarted", a.get("events").get(0).get("type").asText());
      assertTrue(a.has("lineage"));

      ToolRun verify = ToolRun.audit("verify", "--config", config.toString());
      assertEquals(1, verify.code());
      assertTrue(verify.err().contains(dir.toString()) && verify.err().contains("reads the embedded journal itself")
          && verify.err().contains("stop that node first"),
          verify.err());
    }
    assertFalse(Files.exists(dir.resolve(DataFolder.NODE_FILE)), "removed on a clean stop");

    ToolRun offline = ToolRun.export("--agent", "agent-f", "--format", "rl", "--out", out.toString(), "--name",
        "offline",
        "--config", config.toString());
    assertEquals(0, offline.code(), offline.err());
    assertFalse(offline.out().contains("via node"), offline.out());
    assertTrue(offline.out().contains("journal:  jdbc:h2:file:"), "says it read the journal itself: " + offline.out());
    assertEquals(Files.readString(out.resolve("live.jsonl")), Files.readString(out.resolve("offline.jsonl")),
        "the same bytes through the node and from the file");
    ToolRun nothingOffline = ToolRun.export("--agent", "agent-none", "--format", "rl", "--out", out.toString(),
        "--name", "none", "--config", config.toString());
    assertEquals(3, nothingOffline.code(), nothingOffline.err());
    assertTrue(nothingOffline.out().contains("journal:  jdbc:h2:file:"), nothingOffline.out());
  }

  private static String perms(Path p) throws IOException {
    return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
  }

  /** The TCP ports this process listens on: LISTEN sockets of /proc/net/tcp{,6} whose inode is one of our fds. */
  static Set<Integer> listeningPorts() throws IOException {
    Set<String> ours = new HashSet<>();
    try (var fds = Files.list(Path.of("/proc/self/fd"))) {
      fds.forEach(fd -> {
        try {
          String link = Files.readSymbolicLink(fd).toString();
          if (link.startsWith("socket:[")) ours.add(link.substring(8, link.length() - 1));
        } catch (IOException ignored) {
          // closed meanwhile
        }
      });
    }
    Map<String, Integer> listening = new HashMap<>();
    for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
      Path p = Path.of(table);
      if (!Files.exists(p)) continue;
      // Read once: the table changes between two reads (other processes open and close sockets).
      List<String> lines = Files.readAllLines(p);
      for (String line : lines.subList(1, lines.size())) {
        String[] f = line.trim().split("\\s+");
        if (f.length > 9 && f[3].equals("0A")) {
          String local = f[1];
          listening.put(f[9], Integer.parseInt(local.substring(local.lastIndexOf(':') + 1), 16));
        }
      }
    }
    Set<Integer> ports = new HashSet<>();
    listening.forEach((inode, port) -> {
      if (ours.contains(inode)) ports.add(port);
    });
    return ports;
  }
}
