package io.otl.persistence;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The folder of the embedded (H2 file) journal, claimed by one process at a time (issue #14):
 *
 * <ul>
 *   <li>{@value #LOCK} holds the claiming process's pid and role under an OS file lock
 *       ({@link FileChannel#tryLock}), so a second node on the same folder refuses to start with
 *       the folder and the other pid, instead of starting and serving stale reads. The OS drops the
 *       lock when the process dies, even on kill -9.
 *   <li>The folder is 0700 and our files 0600: the journal holds trajectories.
 *   <li>The database gets a generated password, kept in {@code <name>.password} beside it (0600) and
 *       reused; a journal created before, with the empty password, is migrated once (ALTER USER).
 *   <li>A running node publishes {@value #NODE_FILE} (pid, HTTP host and port, 0600), removed on a
 *       clean stop, so the command-line tools read through its HTTP API instead of the file.
 * </ul>
 */
public final class DataFolder implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(DataFolder.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  public static final String LOCK = "node.lock";
  public static final String NODE_FILE = "node.json";
  static final Set<PosixFilePermission> DIR_PERMS = PosixFilePermissions.fromString("rwx------");
  static final Set<PosixFilePermission> FILE_PERMS = PosixFilePermissions.fromString("rw-------");

  private final Path dir;
  private final String baseName;
  private final FileChannel channel;
  private final FileLock lock;
  private final JournalSettings journal;
  private boolean closed;

  private DataFolder(Path dir, String baseName, FileChannel channel, FileLock lock, JournalSettings journal) {
    this.dir = dir;
    this.baseName = baseName;
    this.channel = channel;
    this.lock = lock;
    this.journal = journal;
  }

  /** Another process holds the folder; {@code node} is its HTTP endpoint when it is a node that published one. */
  public static final class InUse extends IllegalStateException {
    private final transient Optional<NodeEndpoint> node;
    private final String pid;
    private final String situation;

    private final boolean byNode;

    InUse(String situation, String advice, String pid, Optional<NodeEndpoint> node, boolean byNode) {
      super(situation + "; " + advice);
      this.situation = situation;
      this.pid = pid;
      this.node = node;
      this.byNode = byNode;
    }

    /** A node holds the folder (not a command-line tool), whether or not it has published its HTTP API. */
    public boolean byNode() {
      return byNode;
    }

    /** Which folder, held by whom (the message without its advice, for a command with its own). */
    public String situation() {
      return situation;
    }

    public Optional<NodeEndpoint> node() {
      return node;
    }

    public String pid() {
      return pid;
    }
  }

  /** What a running node publishes in {@value #NODE_FILE}. */
  public record NodeEndpoint(long pid, String host, int port) {
    /** Where a local client reaches it: a wildcard bind address means loopback. */
    public String baseUrl() {
      String h = host == null || host.isBlank() || host.equals("0.0.0.0") || host.equals("::") ? "127.0.0.1" : host;
      return "http://" + (h.contains(":") ? "[" + h + "]" : h) + ":" + port;
    }
  }

  /** The folder of an H2 file journal (absolute); empty for PostgreSQL and in-memory or remote H2. */
  public static Optional<Path> of(JournalSettings s) {
    return base(s).map(b -> b.getParent());
  }

  /** {@code <folder>/<name>} of {@code jdbc:h2:[file:]<folder>/<name>[;options]}, absolute. */
  static Optional<Path> base(JournalSettings s) {
    if (s.kind() != JournalSettings.Kind.H2) return Optional.empty();
    String rest = s.url().substring("jdbc:h2:".length());
    if (rest.startsWith("file:")) {
      rest = rest.substring("file:".length());
    } else if (!(rest.startsWith("/") || rest.startsWith("./") || rest.startsWith("~") || rest.startsWith("../"))) {
      return Optional.empty(); // mem:, tcp:, ssl:, zip:, …: no folder of ours
    }
    int semi = rest.indexOf(';');
    String path = semi < 0 ? rest : rest.substring(0, semi);
    if (path.startsWith("~")) path = System.getProperty("user.home") + path.substring(1);
    Path p = Path.of(path).toAbsolutePath().normalize();
    return p.getParent() == null ? Optional.empty() : Optional.of(p);
  }

  /**
   * Claims the folder of an H2 file journal for this process ({@code role}: node, export, audit):
   * checks it is writable, tightens permissions, takes the lock, and returns the settings with the
   * database password to use. For any other journal, returns empty and does nothing.
   *
   * @throws InUse when another process holds it (the message names the folder and its pid)
   * @throws IllegalStateException when the folder cannot be used (the message names the folder and
   *     the permission)
   */
  public static Optional<DataFolder> claim(JournalSettings s, String role) {
    Optional<Path> base = base(s);
    if (base.isEmpty()) return Optional.empty();
    Path dir = base.get().getParent();
    String name = base.get().getFileName().toString();
    prepare(dir);
    FileChannel channel = null;
    try {
      channel = FileChannel.open(dir.resolve(LOCK), StandardOpenOption.CREATE, StandardOpenOption.READ,
          StandardOpenOption.WRITE);
      restrict(dir.resolve(LOCK));
      FileLock lock;
      try {
        lock = channel.tryLock();
      } catch (OverlappingFileLockException e) {
        lock = null; // this JVM already holds it: another node in the same process
      }
      if (lock == null) {
        String holder = Files.readString(dir.resolve(LOCK), StandardCharsets.UTF_8).strip();
        channel.close();
        throw inUse(dir, holder);
      }
      channel.truncate(0);
      channel.write(ByteBuffer.wrap((ProcessHandle.current().pid() + " " + role + "\n").getBytes(StandardCharsets.UTF_8)), 0);
      channel.force(false);
      DataFolder folder = new DataFolder(dir, name, channel, lock, s);
      try {
        JournalSettings withPassword = s.password().isEmpty() ? H2Password.ensure(s, dir, name) : s;
        return Optional.of(new DataFolder(dir, name, channel, lock, withPassword));
      } catch (RuntimeException e) {
        folder.close();
        throw e;
      }
    } catch (IOException e) {
      closeQuietly(channel);
      throw new IllegalStateException("the data folder " + dir + " cannot be used: " + describe(e), e);
    }
  }

  /**
   * The settings with the embedded journal's stored password, without claiming the folder: for code
   * in the node's own JVM (tests, embedding tools) that opens the journal beside it. Unchanged when a
   * password is configured or none is stored.
   */
  public static JournalSettings withStoredPassword(JournalSettings s) {
    if (!s.password().isEmpty()) return s;
    Optional<Path> base = base(s);
    if (base.isEmpty()) return s;
    Path file = base.get().resolveSibling(base.get().getFileName() + ".password");
    try {
      return Files.exists(file) ? s.withPassword(Files.readString(file, StandardCharsets.UTF_8).strip()) : s;
    } catch (IOException e) {
      throw new IllegalStateException("the database password file " + file + " cannot be read: " + describe(e), e);
    }
  }

  /** Who holds the folder of this journal (a node with its endpoint, or a tool), if anyone does. */
  public static Optional<InUse> holder(JournalSettings s) {
    Optional<Path> dir = of(s);
    if (dir.isEmpty() || !Files.exists(dir.get().resolve(LOCK))) return Optional.empty();
    try (FileChannel ch = FileChannel.open(dir.get().resolve(LOCK), StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      FileLock l;
      try {
        l = ch.tryLock();
      } catch (OverlappingFileLockException e) {
        l = null;
      }
      if (l != null) {
        l.release();
        return Optional.empty();
      }
      return Optional.of(inUse(dir.get(), Files.readString(dir.get().resolve(LOCK), StandardCharsets.UTF_8).strip()));
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  private static InUse inUse(Path dir, String holder) {
    String[] parts = holder.split(" ");
    String pid = parts.length > 0 && !parts[0].isEmpty() ? parts[0] : "unknown";
    String role = parts.length > 1 ? parts[1] : "node";
    Optional<NodeEndpoint> node = Optional.empty();
    if (role.equals("node")) node = readEndpoint(dir.resolve(NODE_FILE));
    String who = role.equals("node") ? "another node" : "another process (otl-node " + role + ")";
    return new InUse("the data folder " + dir + " is in use by " + who + " with pid " + pid,
        // How to give it one, not only the key's name: a second process started from the same folder is
        // the README's node beside the embedded example (trial t89).
        "stop it first, or give this process its own folder: agentscope.training.db.url (env OTL_DB_URL, or"
            + " -Dagentscope.training.db.url=…), e.g. jdbc:h2:file:./data-2/journal", pid, node,
        role.equals("node"));
  }

  private static Optional<NodeEndpoint> readEndpoint(Path file) {
    try {
      JsonNode n = JSON.readTree(file.toFile());
      return Optional.of(new NodeEndpoint(n.path("pid").asLong(), n.path("httpHost").asText(), n.path("httpPort").asInt()));
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  /** Creates the folder (0700) or checks an existing one is writable, then takes group and world access away. */
  private static void prepare(Path dir) {
    if (Files.exists(dir)) {
      if (!Files.isDirectory(dir)) {
        throw new IllegalStateException("the data folder " + dir + " is not a folder");
      }
      Set<PosixFilePermission> perms = permissions(dir);
      // Root may write anywhere; a folder its owner made read-only is still meant to stay so.
      boolean ownerMayWrite = perms == null || perms.contains(PosixFilePermission.OWNER_WRITE);
      if (!Files.isWritable(dir) || !ownerMayWrite) {
        throw new IllegalStateException("the data folder " + dir + " is read-only"
            + (perms == null ? "" : " (" + PosixFilePermissions.toString(perms) + ")")
            + ": the node needs permission to read and write it (e.g. chmod u+rwx " + dir + ")");
      }
    } else {
      try {
        Files.createDirectories(dir);
      } catch (IOException e) {
        throw new IllegalStateException("the data folder " + dir + " cannot be created: " + describe(e)
            + " (the node needs permission to write its parent folder)", e);
      }
    }
    try {
      Files.setPosixFilePermissions(dir, DIR_PERMS);
    } catch (UnsupportedOperationException | IOException e) {
      log.warn("could not restrict the data folder {} to its owner: {}", dir, e.getMessage());
    }
  }

  private static Set<PosixFilePermission> permissions(Path p) {
    try {
      return Files.getPosixFilePermissions(p);
    } catch (UnsupportedOperationException | IOException e) {
      return null;
    }
  }

  /** 0600 where the file system has POSIX permissions. */
  static void restrict(Path file) {
    try {
      Files.setPosixFilePermissions(file, FILE_PERMS);
    } catch (UnsupportedOperationException | IOException ignored) {
      // not POSIX (or gone): nothing to tighten
    }
  }

  /** Writes a small file readable by its owner only, atomically. */
  static void writePrivate(Path file, String content) throws IOException {
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    Files.deleteIfExists(tmp);
    try {
      Files.createFile(tmp, PosixFilePermissions.asFileAttribute(FILE_PERMS));
    } catch (UnsupportedOperationException e) {
      Files.createFile(tmp);
    }
    Files.writeString(tmp, content, StandardCharsets.UTF_8);
    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  static String describe(IOException e) {
    if (e instanceof AccessDeniedException) return "permission denied";
    return e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
  }

  private static void closeQuietly(FileChannel ch) {
    if (ch == null) return;
    try {
      ch.close();
    } catch (IOException ignored) {
      // nothing to release
    }
  }

  static String randomSecret() {
    byte[] b = new byte[24];
    new SecureRandom().nextBytes(b);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
  }

  public Path dir() {
    return dir;
  }

  /** The journal settings to open the database with (the generated password when none was configured). */
  public JournalSettings journal() {
    return journal;
  }

  /** 0600 on the database's files (H2 creates them with the process umask). */
  public void tighten() {
    try (var files = Files.list(dir)) {
      files.filter(f -> Files.isRegularFile(f) && f.getFileName().toString().startsWith(baseName + "."))
          .forEach(DataFolder::restrict);
    } catch (IOException e) {
      log.warn("could not restrict the files of {}: {}", dir, e.getMessage());
    }
  }

  /** Tells the command-line tools where this node's HTTP API is ({@value #NODE_FILE}, 0600). */
  public synchronized void publish(String host, int port) {
    if (closed) return;
    ObjectNode n = JSON.createObjectNode();
    n.put("pid", ProcessHandle.current().pid());
    n.put("httpHost", host);
    n.put("httpPort", port);
    try {
      writePrivate(dir.resolve(NODE_FILE), n.toString() + "\n");
    } catch (IOException e) {
      log.warn("could not write {}: {}; the command-line tools will not find this node", dir.resolve(NODE_FILE),
          e.getMessage());
    }
  }

  /** Removes {@value #NODE_FILE}: the node no longer answers. */
  public synchronized void unpublish() {
    try {
      Files.deleteIfExists(dir.resolve(NODE_FILE));
    } catch (IOException e) {
      log.warn("could not remove {}: {}", dir.resolve(NODE_FILE), e.getMessage());
    }
  }

  /** Unpublishes and releases the folder; idempotent. */
  @Override
  public synchronized void close() {
    if (closed) return;
    closed = true;
    if (channel == null) return;
    unpublish();
    try {
      if (lock.isValid()) lock.release();
    } catch (IOException ignored) {
      // closing the channel releases it too
    }
    closeQuietly(channel);
  }
}
