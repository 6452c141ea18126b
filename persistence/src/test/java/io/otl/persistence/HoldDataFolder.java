package io.otl.persistence;

/** A second process for {@link DataFolderTest}: claims the folder of the H2 URL given, says so, waits for stdin to close. */
public final class HoldDataFolder {
  private HoldDataFolder() {}

  public static void main(String[] args) throws Exception {
    JournalSettings s = new JournalSettings(JournalSettings.Kind.H2, args[0], "sa", "", 2);
    try (DataFolder f = DataFolder.claim(s, "node").orElseThrow()) {
      System.out.println("held " + ProcessHandle.current().pid());
      System.out.flush();
      while (System.in.read() >= 0) {
        // hold until the parent closes our stdin or kills us
      }
    }
  }
}
