package io.otl.node.config;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

final class TestFiles {

  private TestFiles() {}

  /** One of the AgentScope sample files copied unchanged into src/test/resources/config. */
  static Path sample(String name) {
    try {
      return Path.of(TestFiles.class.getResource("/config/" + name).toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  static Path write(Path dir, String name, String content) {
    try {
      Path file = dir.resolve(name);
      Files.writeString(file, content, StandardCharsets.UTF_8);
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
