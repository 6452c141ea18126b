package io.otl.node.testing;

import io.otl.node.AuditCommand;
import io.otl.node.ExportCommand;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

/**
 * One run of a command-line tool in this JVM, as {@code otl-node export|audit} runs it: its exit
 * code and what it printed to stdout and stderr.
 */
public record ToolRun(int code, String out, String err) {

  /** {@code export} with no environment variables of its own (OTL_* come from a --config file). */
  public static ToolRun export(String... args) {
    return capture((out, err) -> ExportCommand.run(List.of(args), out, err, Map.of()));
  }

  public static ToolRun audit(String... args) {
    return capture((out, err) -> AuditCommand.run(List.of(args), out, err));
  }

  private static ToolRun capture(BiFunction<PrintStream, PrintStream, Integer> tool) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = tool.apply(new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true,
        StandardCharsets.UTF_8));
    return new ToolRun(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }
}
