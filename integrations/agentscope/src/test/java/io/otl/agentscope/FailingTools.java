package io.otl.agentscope;

import io.agentscope.core.tool.Tool;
import io.agentscope.core.tool.ToolParam;

/** A tool whose backend is down: AgentScope turns the exception into an "Error: ..." result. */
public class FailingTools {
  @Tool(name = "lookup_order", description = "Finds an order and tells where it is")
  public String lookupOrder(@ToolParam(name = "query", description = "the order number or the question") String query) {
    throw new IllegalStateException("warehouse system offline");
  }
}
