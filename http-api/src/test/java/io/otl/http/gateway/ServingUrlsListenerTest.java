package io.otl.http.gateway;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Which endpoints plainly are the node's own HTTP listener, refused as a version's endpoint and as v0's URL. */
class ServingUrlsListenerTest {

  @Test
  void aLoopbackListenerIsReachedByLoopbackAddressesLocalhostAndTheAnyAddress() {
    for (String url : new String[] {"http://127.0.0.1:8080/v1", "http://localhost:8080", "http://LOCALHOST:8080/v1/",
        "http://127.0.0.2:8080/v1", "http://[::1]:8080/v1/chat/completions", "http://0.0.0.0:8080/v1",
        "https://localhost:8080/v1"}) {
      assertTrue(ServingUrls.reachesListener(url, "127.0.0.1", 8080), url);
    }
    assertTrue(ServingUrls.reachesListener("http://localhost/v1", "127.0.0.1", 80), "no port: 80");
    assertTrue(ServingUrls.reachesListener("https://localhost/v1", "localhost", 443), "no port: 443");
  }

  @Test
  void anotherPortOrAnotherMachineIsAModelServer() {
    for (String url : new String[] {"http://127.0.0.1:8000/v1", "http://localhost/v1", "http://vllm:8080/v1",
        "http://10.1.2.3:8080/v1", "not a url", ""}) {
      assertFalse(ServingUrls.reachesListener(url, "127.0.0.1", 8080), url);
    }
    assertFalse(ServingUrls.reachesListener(null, "127.0.0.1", 8080));
    assertFalse(ServingUrls.reachesListener("http://localhost:8080/v1", "127.0.0.1", 0), "a port not bound yet");
    // A listener on one address of its own is not reached through loopback; its own name, as written, is it.
    assertFalse(ServingUrls.reachesListener("http://127.0.0.1:8080/v1", "10.1.2.3", 8080));
    assertTrue(ServingUrls.reachesListener("http://10.1.2.3:8080/v1", "10.1.2.3", 8080));
    assertTrue(ServingUrls.reachesListener("http://Node-A.internal:8080/v1", "node-a.internal", 8080));
    assertFalse(ServingUrls.reachesListener("http://node-b.internal:8080/v1", "node-a.internal", 8080),
        "names are not looked up");
  }

  @Test
  void aListenerOnEveryAddressIsReachedByAnyAddressOfThisMachine() {
    assertTrue(ServingUrls.reachesListener("http://127.0.0.1:8080/v1", "0.0.0.0", 8080));
    assertTrue(ServingUrls.reachesListener("http://[::1]:8080/v1", "::", 8080));
    assertTrue(ServingUrls.reachesListener("http://localhost:8080/v1", "0.0.0.0", 8080));
    assertFalse(ServingUrls.reachesListener("http://192.0.2.1:8080/v1", "0.0.0.0", 8080), "not this machine's");
  }
}
