package io.otl.persistence.localstore;

import com.typesafe.config.Config;
import java.nio.file.Path;

/**
 * Where trajectories are stored besides the journal ({@code agentscope.training.data-collector},
 * defaults and comments in core-actors' {@code reference.conf}). The node's validator has already
 * refused anything but {@code database}, {@code local} and AgentScope's {@code oss}, which it accepts
 * with a warning and which, like {@code database}, keeps trajectories in the journal only.
 *
 * @param storeType {@code database} or {@code oss} (the journal only) or {@code local}
 * @param storePath the folder of the day files when {@code local}
 */
public record StoreSettings(String storeType, Path storePath) {

  /** Reads {@code data-collector.store-type} and {@code store-path} from the {@code agentscope.training} section. */
  public static StoreSettings fromConfig(Config training) {
    return new StoreSettings(training.getString("data-collector.store-type"),
        Path.of(training.getString("data-collector.store-path")));
  }

  /** True when completed trajectories are also written as JSON lines under {@link #storePath()}. */
  public boolean local() {
    return "local".equals(storeType);
  }
}
