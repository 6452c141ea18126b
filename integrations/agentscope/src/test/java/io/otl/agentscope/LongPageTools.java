package io.otl.agentscope;

import io.agentscope.core.tool.Tool;
import io.agentscope.core.tool.ToolParam;

/** A tool that fetches a whole web page: its result is longer than the node's default max-text-length (65536). */
public class LongPageTools {
  static final int PAGE_LENGTH = 80_000;

  @Tool(name = "fetch_page", description = "Fetches a web page and returns its text")
  public String fetchPage(@ToolParam(name = "query", description = "the page's address or the question") String query) {
    return "Contact: jo@example.com. " + "lorem ipsum ".repeat(PAGE_LENGTH / 12);
  }
}
