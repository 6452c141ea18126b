package io.otl.agentscope;

import io.agentscope.core.tool.Tool;
import io.agentscope.core.tool.ToolParam;

/** The one tool of the test agent (and of docs/connect-agentscope.md). */
public class OrderTools {
  @Tool(name = "lookup_order", description = "Finds an order and tells where it is")
  public String lookupOrder(@ToolParam(name = "query", description = "the order number or the question") String query) {
    return "{\"order\":\"4711\",\"status\":\"shipped\"}";
  }
}
