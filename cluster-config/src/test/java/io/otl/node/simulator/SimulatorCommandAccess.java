package io.otl.node.simulator;

/** The simulator command's usage text, for tests outside its package. */
public final class SimulatorCommandAccess {
  private SimulatorCommandAccess() {}

  public static String usage() {
    return SimulatorCommand.USAGE;
  }
}
