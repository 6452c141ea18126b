package io.otl.node;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.otl.core.api.AuditLog;
import io.otl.core.api.AuditLog.Kind;
import io.otl.persistence.audit.AuditReader;
import io.otl.persistence.audit.JournalVerifier;
import io.otl.persistence.audit.Timeline;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * {@code java -jar otl-node.jar audit …} (design §7.4), reading the journal directly (the node need
 * not run; nothing is written):
 *
 * <pre>
 * audit &lt;session|coordinator|model|job&gt; &lt;id&gt; [--as-of T] [--format text|json] [--config FILE]
 * audit verify [--kind session|coordinator|model|all] [--config FILE]
 * </pre>
 *
 * Exit codes: 0 done; 1 not found, or {@code verify} found problems, or the journal could not be
 * read; 2 wrong usage.
 */
public final class AuditCommand {
  static final Duration TIMEOUT = Duration.ofMinutes(10);

  static final String USAGE = """
      usage: audit <session|coordinator|model|job> <id> [--as-of <ISO-8601>] [--format text|json] [--config <file>]
             audit verify [--kind session|coordinator|model|all] [--config <file>]
        id: a session id, an agent id (coordinator, model) or a job id (job-<n>-<agentId>)
        --as-of: the events known at that time and the entity's state then
                 (e.g. 2026-11-20T02:00:00Z, 2026-11-20T10:00:00+08:00, or 2026-11-20 for its start, UTC)
        verify: replays every entity of the kind (default: all) from the journal (the embedded H2 journal with
                its node stopped; PostgreSQL beside running nodes); reports undeserializable events and
                sequence gaps (exit code 1 when it finds any)
      exit codes: 0 done, 1 not found / problems found / journal unreadable, 2 wrong usage or an invalid --config""";

  private AuditCommand() {}

  /** {@code Main} hands {@code audit …} here; exits with the command's code. */
  public static void main(String[] args) {
    int code = run(List.of(args));
    System.out.flush();
    System.exit(code);
  }

  /** The command line: stdout carries the audit only; logs go to stderr, warnings and above. */
  public static int run(List<String> args) {
    logsToStderr();
    return run(args, System.out, System.err);
  }

  /** Keeps stdout clean for {@code --format json}: console log appenders write to stderr, at WARN. */
  static void logsToStderr() {
    if (!(org.slf4j.LoggerFactory.getILoggerFactory() instanceof ch.qos.logback.classic.LoggerContext ctx)) return;
    ch.qos.logback.classic.Logger root = ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.setLevel(ch.qos.logback.classic.Level.WARN);
    ctx.getLogger("org.apache.pekko").setLevel(ch.qos.logback.classic.Level.WARN);
    for (var it = root.iteratorForAppenders(); it.hasNext(); ) {
      if (it.next() instanceof ch.qos.logback.core.ConsoleAppender<?> console) {
        console.stop();
        console.setTarget("System.err");
        console.start();
      }
    }
  }

  public static int run(List<String> args, PrintStream out, PrintStream err) {
    Optional<Path> config = Optional.empty();
    Instant asOf = null;
    String format = "text";
    boolean formatGiven = false;
    String kindOption = null;
    List<String> positional = new java.util.ArrayList<>();
    java.util.Set<String> given = new java.util.HashSet<>();
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      String value = i + 1 < args.size() ? args.get(i + 1) : null;
      // The last of two --as-of (or --format …) won silently: which one was meant cannot be told.
      if (List.of("--config", "--as-of", "--format", "--kind").contains(a) && !given.add(a)) {
        return usage(err, a + " is given twice; give it once");
      }
      // "--as-of --format json" read "--format" as the time and answered "--as-of --format is not an ISO-8601
      // time" (new-user trial, session 50); export and the simulator name the slip so.
      if (List.of("--config", "--as-of", "--format", "--kind").contains(a) && value != null && value.startsWith("--")) {
        return usage(err, a + " needs a value; it is followed by the option " + value);
      }
      switch (a) {
        case "--config" -> {
          if (value == null) return usage(err, "--config needs a file");
          Path file = Path.of(value);
          Optional<String> problem = Main.configFileProblem(file);
          if (problem.isPresent()) return usage(err, problem.get());
          config = Optional.of(file);
          i++;
        }
        case "--as-of" -> {
          if (value == null) return usage(err, "--as-of needs an ISO-8601 time");
          // The forms export's --since/--until take: a date there and "not an ISO-8601 time" here confused.
          try {
            asOf = ExportCommand.parseTime("--as-of", value);
          } catch (IllegalArgumentException e) {
            return usage(err, e.getMessage());
          }
          i++;
        }
        case "--format" -> {
          if (!"text".equals(value) && !"json".equals(value)) return usage(err, "--format is text or json");
          format = value;
          formatGiven = true;
          i++;
        }
        case "--kind" -> {
          if (value == null) return usage(err, "--kind needs session, coordinator, model or all");
          kindOption = value;
          i++;
        }
        case "-h", "--help", "help" -> {
          out.println(USAGE);
          return 0;
        }
        default -> {
          if (a.startsWith("--")) return usage(err, "unknown option " + a);
          positional.add(a);
        }
      }
    }
    if (positional.isEmpty()) return usage(err, "what to audit is missing");
    if (positional.get(0).equals("verify")) {
      if (positional.size() > 1) return usage(err, "verify takes no argument besides its options");
      // verify prints a text report of every entity: an option of the entity audit would be silently ignored
      if (asOf != null) return usage(err, "--as-of belongs to audit <kind> <id>; verify takes --kind and --config");
      if (formatGiven) return usage(err, "--format belongs to audit <kind> <id>; verify takes --kind and --config");
      Set<Kind> kinds;
      if (kindOption == null || kindOption.equals("all")) {
        kinds = EnumSet.of(Kind.SESSION, Kind.COORDINATOR, Kind.MODEL);
      } else {
        Optional<Kind> k = Kind.parse(kindOption).filter(x -> x != Kind.JOB);
        if (k.isEmpty()) return usage(err, "--kind is '" + kindOption + "'; allowed: session, coordinator, model, all");
        kinds = EnumSet.of(k.get());
      }
      return withJournal(config, err, null, journal -> verify(journal, kinds, out));
    }
    if (kindOption != null) return usage(err, "--kind belongs to verify");
    // The kind first: "audit lineage model bot1" (the API's lineage path typed as a command) was answered
    // "unexpected argument 'bot1'", which sent the user looking at the wrong word.
    Optional<Kind> kind = Kind.parse(positional.get(0));
    if (kind.isEmpty()) {
      return usage(err, "kind is '" + positional.get(0) + "'; allowed: " + Kind.allowed()
          + (positional.get(0).equalsIgnoreCase("lineage")
              ? " (lineage is read from a running node, GET /v1/audit/lineage/{model|session|job}/{id}; "
                  + "the text of audit job <jobId> and audit session <sessionId> ends with it)"
              : ""));
    }
    if (positional.size() > 2) {
      return usage(err, "one <kind> <id> at a time; unexpected argument '" + positional.get(2) + "'");
    }
    if (positional.size() != 2) return usage(err, "expected <kind> <id>");
    String id = positional.get(1);
    try {
      AuditReader.checkId(kind.get(), id);
    } catch (IllegalArgumentException e) {
      return usage(err, e.getMessage());
    }
    Instant t = asOf;
    String f = format;
    return withJournal(config, err, http -> AuditOverHttp.run(http, kind.get(), id, t, f, out), journal -> {
      AuditReader reader = journal.auditReader();
      if (f.equals("json")) {
        json(reader, kind.get(), id, t, out);
      } else {
        text(reader, kind.get(), id, t, out);
      }
      out.flush();
      return 0;
    });
  }

  /** The text timeline, and the state as of {@code asOf} when given (also served by a running node). */
  static void text(AuditReader reader, Kind kind, String id, Instant asOf, PrintStream out) throws IOException {
    new Timeline(reader, out, TIMEOUT).write(kind, id, asOf);
    if (asOf != null) {
      out.println("state as of " + asOf + ":");
      out.println(AuditReader.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(
          await(reader.stateAsOf(kind, id, asOf))));
    }
  }

  private interface Job {
    int run(OfflineJournal journal) throws Exception;
  }

  private interface HttpJob {
    int run(NodeHttpClient node) throws Exception;
  }

  /**
   * Runs {@code job} on the journal; when a node holds the embedded journal's folder, runs {@code
   * viaNode} against its HTTP API instead ({@code null}: the command needs the journal to itself).
   */
  private static int withJournal(Optional<Path> config, PrintStream err, HttpJob viaNode, Job job) {
    OfflineJournal opened;
    try {
      opened = OfflineJournal.start(config);
    } catch (io.otl.persistence.DataFolder.InUse busy) {
      if (viaNode == null || busy.node().isEmpty()) {
        // verify replays the journal itself: "give this process its own folder" would verify another one.
        err.println("error: " + (viaNode == null
            ? busy.situation() + "; audit verify reads the embedded journal itself and needs it to itself: stop that "
                + "node first (a journal on PostgreSQL is verified beside running nodes)"
            : ExportCommand.noEndpoint(busy)));
        return 1;
      }
      try {
        return viaNode.run(new NodeHttpClient(busy.node().get(), token(config)));
      } catch (AuditLog.NotFound e) {
        err.println("not found: " + e.getMessage());
        return 1;
      } catch (Exception e) {
        err.println("error: " + AuditReader.unwrap(e).getMessage());
        return 1;
      }
    } catch (io.otl.node.config.ConfigValidationException e) {
      // The --config file (or an OTL_* variable) is wrong: what export exits with for the same file (2),
      // where audit said 1, "not found / journal unreadable" (trial t73).
      err.println("error: " + e.getMessage());
      return 2;
    } catch (RuntimeException e) {
      err.println("error: " + e.getMessage());
      return 1;
    }
    try (OfflineJournal journal = opened) {
      return job.run(journal);
    } catch (Exception e) {
      Throwable c = AuditReader.unwrap(e);
      if (c instanceof AuditLog.NotFound) {
        err.println("not found: " + c.getMessage());
      } else {
        err.println("error: " + c.getClass().getSimpleName() + ": " + c.getMessage());
      }
      return 1;
    }
  }

  /** The node's API token, from the same configuration stack as the node. */
  static Optional<String> token(Optional<Path> config) {
    com.typesafe.config.Config root = io.otl.node.config.NodeConfig.resolve(config,
        com.typesafe.config.ConfigFactory.defaultApplication(), System.getenv());
    return io.otl.http.HttpSettings.fromConfig(
        root.getConfig(io.otl.node.config.TrainingSettingsValidator.ROOT)).auth().commandToken();
  }

  private static int verify(OfflineJournal journal, Set<Kind> kinds, PrintStream out) {
    AuditReader reader = journal.auditReader();
    JournalVerifier verifier = new JournalVerifier(reader, Duration.ofMinutes(2));
    out.println("verifying " + kinds.stream().map(Kind::wire).toList() + " in " + journal.journal());
    JournalVerifier.Report report = verifier.verify(kinds, p -> out.println("PROBLEM " + p), pid -> { });
    out.println("checked " + report.entities() + " entities, " + report.events() + " events: "
        + (report.ok() ? "no problem found" : report.problems().size() + " problem(s)"));
    out.flush();
    return report.ok() ? 0 : 1;
  }

  /** The audit response shape, with every event (read a page of 1,000 at a time), and the lineage. */
  private static void json(AuditReader reader, Kind kind, String id, Instant asOf, PrintStream out) throws IOException {
    // Read the first page before writing anything: an unknown id fails here, with nothing (no
    // half-open JSON object) on stdout.
    AuditLog.Page page = await(reader.page(kind, id, 0, AuditLog.MAX_LIMIT, asOf));
    JsonGenerator g = AuditReader.JSON.copy().disable(SerializationFeature.FLUSH_AFTER_WRITE_VALUE)
        .getFactory().createGenerator(out);
    g.setCodec(AuditReader.JSON);
    g.useDefaultPrettyPrinter();
    g.writeStartObject();
    g.writeStringField("kind", kind.wire());
    g.writeStringField("id", id);
    g.writeArrayFieldStart("events");
    while (true) {
      for (AuditLog.Entry e : page.events()) g.writeObject(e);
      if (page.next() == null) break;
      page = await(reader.page(kind, id, page.next(), AuditLog.MAX_LIMIT, asOf));
    }
    g.writeEndArray();
    g.writeObjectField("next", null);
    if (asOf != null) g.writeObjectField("stateAsOf", await(reader.stateAsOf(kind, id, asOf)));
    switch (kind) {
      case MODEL -> g.writeObjectField("lineage", await(reader.modelLineage(id, null)));
      case SESSION -> g.writeObjectField("lineage", await(reader.sessionLineage(id)));
      case JOB -> g.writeObjectField("lineage", await(reader.jobLineage(id)));
      case COORDINATOR -> { }
    }
    g.writeEndObject();
    g.flush();
    out.println();
  }

  private static <T> T await(CompletionStage<T> stage) {
    try {
      return stage.toCompletableFuture().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      Throwable c = AuditReader.unwrap(e);
      if (c instanceof RuntimeException r) throw r;
      throw new IllegalStateException(c);
    } catch (Exception e) {
      throw new IllegalStateException("the journal did not answer within " + TIMEOUT, e);
    }
  }

  private static int usage(PrintStream err, String problem) {
    err.println("error: " + problem);
    err.println(USAGE);
    return 2;
  }
}
