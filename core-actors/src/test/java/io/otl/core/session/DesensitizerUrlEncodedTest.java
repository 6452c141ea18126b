package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * A URL-encoded e-mail address in a tool's input or output (a query string, a form body) may encode its
 * dots too, as {@code encodeURIComponent}-style encoders that escape every non-alphanumeric do:
 * {@code alice%40example%2Ecom} was stored raw while {@code alice%40example.com} was caught (trial t2).
 */
class DesensitizerUrlEncodedTest {
  private final Desensitizer d = Desensitizer.builtInScanner();

  @Test
  void anAddressWithEncodedDotsIsAnEmail() {
    assertEquals("GET /lookup?who=[EMAIL]&x=1", d.apply("GET /lookup?who=alice%40example%2Ecom&x=1"));
    assertEquals("to=[EMAIL]", d.apply("to=alice%2Esmith%40mail%2eexample%2Eco%2Euk"));
    assertEquals("mailto:[EMAIL]", d.apply("mailto:alice%40example.com"));
    // No '@' nor %40: an encoded path is no address.
    assertEquals("a%2Eb%2Ecom/x", d.apply("a%2Eb%2Ecom/x"));
  }
}
