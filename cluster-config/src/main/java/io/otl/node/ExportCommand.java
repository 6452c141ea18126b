package io.otl.node;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.http.HttpSettings;
import io.otl.node.config.NodeConfig;
import io.otl.node.config.TrainingSettings;
import io.otl.node.config.TrainingSettingsValidator;
import io.otl.persistence.DataFolder;
import io.otl.persistence.JournalSchema;
import io.otl.persistence.JournalSettings;
import io.otl.persistence.export.DatasetExport;
import io.otl.persistence.export.ExportFilters;
import io.otl.persistence.export.ExportFormat;
import io.otl.persistence.export.ExportResult;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * {@code java -jar otl-node.jar export --agent A --format sft|dpo|rl [--since ISO] [--until ISO]
 * [--out DIR] [--name NAME] [--config FILE]} (design §6, §7.4): writes a dataset of the agent's
 * sessions completed in {@code [since, until)} straight from the journal; the node need not run.
 * Exit codes: 0 written, 2 wrong usage (nothing done), 1 the export failed (e.g. journal unreachable, or
 * PII found without {@code --allow-pii}: then no file is left), 3 nothing passed the filters (design §6:
 * sft-min-reward, min-quality, dpo-min-margin; no file is left, and stderr gives the counts by reason).
 */
public final class ExportCommand {
  /** Exit code of an export that selected no trajectory. */
  static final int EMPTY = 3;

  private ExportCommand() {}

  static final String USAGE = """
      usage: java -jar otl-node.jar export --agent <agentId> --format sft|dpo|rl
                 [--since <ISO-8601>] [--until <ISO-8601>] [--out <dir>] [--name <name>] [--config <file>] [--allow-pii]
        --since/--until  completion time window [since, until), e.g. 2026-11-01T00:00:00Z or 2026-11-01 (UTC)
        --out            folder for <name>.jsonl and <name>.manifest.json
                         (default: agentscope.training.training-runner.dataset-dir)
        --name           file name without extension (default: <agent>-<format>-<since|all>-<until|now>, the
                         times in UTC in ISO-8601's basic form, which has no ':' for file systems that refuse
                         it: --since 2026-11-01T08:30:00Z gives support-bot-sft-20261101T083000Z-now)
        --config         the node's config file (AgentScope .yml/.json/.toml or HOCON .conf) naming the journal
                         and the filters (training-runner.sft-min-reward, min-quality, dpo-min-margin)
        --allow-pii      keep the file even when the final PII scan finds personal data (default: exit 1, no file)
      While a node runs on the embedded journal's folder, the export goes through its HTTP API (with the
      filters of --config when given, else the node's).
      exit codes: 0 written, 1 failed (or PII found), 2 wrong usage, 3 nothing passed the filters (no file; counts on stderr)""";

  /**
   * Runs with stdout/stderr and the process environment; {@code args} may start with "export". The
   * export's own ActorSystem logs at start; on stdout that line came before {@code manifest:} and
   * broke scripts that read the result, so logs go to stderr, as for {@code audit}.
   */
  public static int run(List<String> args) {
    AuditCommand.logsToStderr();
    return run(args, System.out, System.err, System.getenv());
  }

  /** The same with explicit streams and environment (tests, embedding tools). */
  public static int run(List<String> args, PrintStream out, PrintStream err, Map<String, String> env) {
    List<String> a = !args.isEmpty() && args.get(0).equals("export") ? args.subList(1, args.size()) : args;
    String agent = null;
    String formatName = null;
    String since = null;
    String until = null;
    String outDir = null;
    String name = null;
    Optional<Path> configFile = Optional.empty();
    boolean allowPii = false;
    java.util.Set<String> given = new java.util.HashSet<>();
    for (int i = 0; i < a.size(); i++) {
      String o = a.get(i);
      if (o.equals("--help") || o.equals("-h")) {
        out.println(USAGE);
        return 0;
      }
      if (o.equals("--allow-pii")) {
        // The flag's duplicate is as much a usage error as a value option's: "an option given twice" exits 2
        // (README), and it passed silently (new-user trial, session 50).
        if (!given.add(o)) return usage(err, o + " is given twice; give it once");
        allowPii = true;
        continue;
      }
      if (!List.of("--agent", "--format", "--since", "--until", "--out", "--name", "--config").contains(o)) {
        return usage(err, "unknown option for export: " + o);
      }
      if (i + 1 >= a.size()) return usage(err, o + " needs a value");
      // "--format sft … --format dpo" exported dpo: which one was meant cannot be told (as a query
      // parameter sent twice is a 400 on the HTTP API).
      if (!given.add(o)) return usage(err, o + " is given twice; give it once");
      String v = a.get(++i);
      // "--out --name x" took "--name" as the folder and x as an unknown option.
      if (v.startsWith("--")) return usage(err, o + " needs a value; it is followed by the option " + v);
      // "--out -" made a folder named "-": there is no stdout form, the export is two files.
      if (o.equals("--out") && (v.equals("-") || v.isBlank())) {
        return usage(err, "--out '" + v + "' is not a folder: the export writes <name>.jsonl and"
            + " <name>.manifest.json into the folder --out names (no stdout form)");
      }
      switch (o) {
        case "--agent" -> agent = v;
        case "--format" -> formatName = v;
        case "--since" -> since = v;
        case "--until" -> until = v;
        case "--out" -> outDir = v;
        case "--name" -> name = v;
        default -> {
          Path file = Path.of(v);
          Optional<String> problem = Main.configFileProblem(file);
          if (problem.isPresent()) return usage(err, problem.get());
          configFile = Optional.of(file);
        }
      }
    }
    if (outDir != null) {
      // A file given as --out was found only when the files were written, after the journal was read: exit 1
      // "cannot write …", or through a node "the export through the node failed".
      String outProblem = notAFolder(Path.of(outDir));
      if (outProblem != null) return usage(err, "--out " + outDir + ": " + outProblem);
    }
    if (agent == null) return usage(err, "--agent is required");
    String agentProblem = io.otl.core.Ids.problem("--agent", agent, io.otl.core.Ids.MAX_AGENT_ID);
    if (agentProblem != null) return usage(err, agentProblem);
    if (formatName == null) return usage(err, "--format is required (sft, dpo or rl)");
    ExportFormat format;
    Instant from;
    Instant to;
    try {
      format = ExportFormat.parse(formatName);
      from = since == null ? null : parseTime("--since", since);
      to = until == null ? null : parseTime("--until", until);
    } catch (IllegalArgumentException e) {
      return usage(err, e.getMessage());
    }
    if (from != null && to != null && !from.isBefore(to)) {
      return usage(err, "--since " + since + " must be before --until " + until);
    }
    if (name != null) {
      // A file name, not a path: through a running node nothing else checked it, and ../x wrote
      // beside --out (or failed naming a .tmp file).
      String nameProblem = io.otl.core.Ids.problem("--name", name, 200);
      if (nameProblem != null) return usage(err, nameProblem + " (a file name without extension, written in --out)");
    }
    if (name == null) name = defaultName(agent, format, from, to);

    Config base;
    JournalSettings journal;
    Path configuredDir;
    HttpSettings.AuthSettings auth;
    ExportFilters filters;
    try {
      base = NodeConfig.resolve(configFile, ConfigFactory.defaultApplication(), env);
      Config training = base.getConfig(TrainingSettingsValidator.ROOT);
      journal = JournalSettings.fromConfig(training);
      configuredDir = TrainingSettings.datasetDir(training);
      auth = HttpSettings.fromConfig(training).auth();
      filters = ExportFilters.fromRoot(base);
    } catch (RuntimeException e) {
      err.println("error: " + e.getMessage());
      return 2;
    }
    Path dir = outDir != null ? Path.of(outDir) : configuredDir;
    String dirProblem = outDir != null ? null : notAFolder(dir);
    if (dirProblem != null) {
      err.println("error: training-runner.dataset-dir " + dir + " (where export writes without --out): " + dirProblem);
      return 2;
    }

    Optional<DataFolder> folder;
    try {
      JournalSchema.requireJournalFile(journal);
      folder = DataFolder.claim(journal, "export");
    } catch (DataFolder.InUse busy) {
      if (busy.node().isEmpty()) {
        err.println("error: " + noEndpoint(busy));
        return 1;
      }
      // The filters of a --config file apply through the node too (the node's own otherwise), as
      // they do offline: the same command must select the same trajectories whether a node runs or not.
      return ExportOverHttp.run(new NodeHttpClient(busy.node().get(), auth.commandToken()),
          agent, format, from, to, allowPii, configFile.isPresent() ? filters : null, dir, name, out, err);
    } catch (RuntimeException e) {
      err.println("error: " + e.getMessage());
      return 1;
    }
    try {
      return exportFromFile(folder.map(DataFolder::journal).orElse(journal), base, filters, agent, format, from, to,
          allowPii, dir, name, out, err);
    } finally {
      folder.ifPresent(DataFolder::close);
    }
  }

  private static int exportFromFile(JournalSettings journal, Config base, ExportFilters filters, String agent,
      ExportFormat format, Instant from, Instant to, boolean allowPii, Path dir, String name, PrintStream out,
      PrintStream err) {
    try {
      // Fail early, with the settings to fix, when the database or the journal in it is not there.
      JournalSchema.requireJournalTables(journal);
    } catch (Exception e) {
      err.println("error: " + e.getMessage());
      return 1;
    }
    Config config = ConfigFactory.parseMap(Map.of(
            "pekko.actor.provider", "local",
            "pekko.loglevel", "WARNING"))
        .withFallback(journal.pekkoConfig())
        .withFallback(base);
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "otl-export", config);
    boolean misused = false;
    try {
      DatasetExport export = new DatasetExport(system, filters);
      if (allowPii) export = export.allowingPii();
      ExportResult r = export.forWindow(agent, from, to, format, dir, name)
          .toCompletableFuture().get(6, TimeUnit.HOURS);
      if (r.empty()) {
        // A trainer given an empty file fails late and obscurely: say here what the filters left out.
        err.println("error: nothing to export, no file written: " + r.nothingSelected(agent, from, to));
        return EMPTY;
      }
      if (!r.fileWritten()) {
        err.println("error: the final PII scan found " + String.join(", ", r.piiFindings())
            + "; no file was written (--allow-pii writes it anyway). Counts: " + r.manifestPath());
        return 1;
      }
      out.println("manifest: " + r.manifestPath());
      out.println("file:     " + r.path());
      out.println("count:    " + r.count());
      out.println("sha256:   " + r.sha256());
      // Labelled "selected:", "selected: 3 seen: 1 below-…" read as 3 selected beside a count of 2.
      out.println("sessions: " + r.selectionSummary());
      if (!r.skipped().isEmpty()) out.println("skipped:  " + r.skipped());
      if (!r.piiFindings().isEmpty()) out.println("PII found (kept: --allow-pii): " + String.join(", ", r.piiFindings()));
      printDesensitized(out, r.desensitizedAsWritten());
      return 0;
    } catch (IllegalArgumentException e) {
      misused = true; // a usage error (exit 2) read nothing
      return usage(err, e.getMessage());
    } catch (Exception e) {
      Throwable cause = e instanceof java.util.concurrent.ExecutionException && e.getCause() != null ? e.getCause() : e;
      err.println("error: the export failed: " + cause.getMessage());
      return 1;
    } finally {
      // The docs promise it says where it read; "via node:" alone left a reader of another database unsure (trial
      // t92). Last, so that the manifest stays the first line scripts read; also when nothing was selected or the
      // export failed, where the journal read is what explains it (trial t155).
      if (!misused) out.println("journal:  " + journal.safeUrl());
      system.terminate();
      try {
        system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
      } catch (Exception ignored) {
        // leaving anyway
      }
    }
  }

  /**
   * Why a command cannot go through the node that holds the embedded journal's folder. A node publishes
   * its HTTP API (node.json) once its port is open, seconds into its start: a command typed meanwhile was
   * told "stop it first", where running it again a moment later goes through the node (trial t73).
   */
  static String noEndpoint(io.otl.persistence.DataFolder.InUse busy) {
    if (!busy.byNode()) return busy.getMessage();
    return busy.situation() + ", which has no HTTP API to go through yet (a node opens it a few seconds into its"
        + " start; one embedded without HTTP never does): run the command again once the node answers, or stop it"
        + " first";
  }

  /** A time option, read as the API reads its times ({@link io.otl.core.IsoTimes}). */
  static Instant parseTime(String option, String s) {
    return io.otl.core.IsoTimes.parse(s).orElseThrow(() -> new IllegalArgumentException(option + " " + s
        + (io.otl.core.IsoTimes.withoutZone(s) ? " has no time zone: add Z for UTC or the offset of yours, e.g. " + s + "Z or " + s + "+08:00"
            : " is not an ISO-8601 time; use e.g. 2026-11-01T00:00:00Z, 2026-11-01T08:00:00+08:00 or 2026-11-01")));
  }

  /**
   * ISO-8601's basic form ({@code 20261101T083000Z}): the extended form's colons are refused in Windows
   * file names, and its dashes would blur the name's own separators. {@link #USAGE} says so with an
   * example, since a user who gave {@code --since 2026-11-01T08:30:00Z} looked for that text (trial t101).
   */
  static String defaultName(String agent, ExportFormat format, Instant since, Instant until) {
    DateTimeFormatter f = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);
    return agent + "-" + format.wireName() + "-" + (since == null ? "all" : f.format(since)) + "-"
        + (until == null ? "now" : f.format(until));
  }

  /**
   * Why the export cannot write into {@code dir}, or null: it (or the nearest of its parents that exists) is
   * a file. A folder that does not exist yet is created by the export.
   */
  static String notAFolder(Path dir) {
    Path p = dir.toAbsolutePath().normalize();
    while (p != null && !Files.exists(p)) p = p.getParent();
    if (p == null || Files.isDirectory(p)) return null;
    return p.equals(dir.toAbsolutePath().normalize())
        ? "is a file, not a folder: the export writes <name>.jsonl and <name>.manifest.json into a folder"
            + " (created when missing)"
        : p + " is a file, so no folder can be made under it";
  }

  private static int usage(PrintStream err, String message) {
    err.println("error: " + message);
    err.println(USAGE);
    return 2;
  }

  /**
   * Says how many lines were desensitized as written ({@code desensitizedAsWritten} in the manifest): the
   * journal holds them raw, stored under an earlier build's rules, so the file differs from what audit
   * shows; before trial t167 only the node's log said so, and an export reading the journal said nothing.
   */
  static void printDesensitized(PrintStream out, int n) {
    if (n > 0) {
      out.println("desensitized: " + n + " line(s) as written, stored raw under an earlier build's rules "
          + "(the journal keeps them as stored)");
    }
  }
}
