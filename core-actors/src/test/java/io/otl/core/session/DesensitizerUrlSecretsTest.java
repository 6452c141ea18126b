package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Secrets in a URL: a token in the query ({@code ?key=}, {@code &access_token=}, Azure SAS {@code &sig=}) and
 * the path of a Slack or Discord incoming webhook, which is the credential. They were journaled as sent, or
 * with the whole rest of the URL swallowed ({@code ?api_key=[SECRET]}, {@code &q=1} gone), before trial t162.
 * Values are assembled at run time so that no key-shaped literal sits in the source.
 */
class DesensitizerUrlSecretsTest {
  private final Desensitizer d = Desensitizer.builtInScanner();
  private static final String TOKEN = "Xk9mPq2vL" + "7sQwE4rTy8";

  @Test
  void aTokenInTheQueryBecomesTheMarkerAndTheUrlStays() {
    assertEquals("https://api.example.com/v1/x?key=[SECRET]&q=1", d.apply("https://api.example.com/v1/x?key=" + TOKEN + "&q=1"));
    assertEquals("GET /v1/x?api_key=[SECRET]&q=1 HTTP/1.1", d.apply("GET /v1/x?api_key=" + TOKEN + "&q=1 HTTP/1.1"));
    assertEquals("https://h.example/cb?state=ab12&access_token=[SECRET]#frag",
        d.apply("https://h.example/cb?state=ab12&access_token=" + TOKEN + "#frag"));
    assertEquals("wss://h.example/ws?token=[SECRET]", d.apply("wss://h.example/ws?token=" + TOKEN));
    assertEquals("https://acct.blob.core.windows.net/c/b.txt?sv=2021-06-08&sp=r&sig=[SECRET]&se=2024-12-31",
        d.apply("https://acct.blob.core.windows.net/c/b.txt?sv=2021-06-08&sp=r&sig=Ab3dEfGh%2BiJkLmN0pQ%3D&se=2024-12-31"));
    assertEquals("https://h.example/login?user=bob&password=[SECRET]&next=%2F",
        d.apply("https://h.example/login?user=bob&password=hunter2secret&next=%2F"));
    assertEquals("s3.amazonaws.com/b/k?X-Amz-Signature=[SECRET]",
        d.apply("s3.amazonaws.com/b/k?X-Amz-Signature=4a8f" + "e2c1b9d07a6354f2e1d0c9b8a7f6e5d4c3b2a1908f7e6d5c4b3a2918f7e6d5c4"));
    assertTrue(d.findings("see https://maps.example/api?key=" + TOKEN).contains("secret"));
    // a shell's "&&" is no query: the value is taken whole, its '&' included, as before
    assertEquals("make&&PASSWORD=[SECRET] run", d.apply("make&&PASSWORD=p4ss&w0rd123 run"));
  }

  @Test
  void ordinaryQueryParametersStay() {
    for (String url : new String[] {
        "https://example.com/search?q=pass&key=value", "https://example.com/?token=YOUR_TOKEN&page=2",
        "https://s3.example.com/b?list-type=2&key=reports/2024/jan.csv", "https://example.com/?key=20240101",
        "https://example.com/items?sort_key=created_at2&page=12", "https://example.com/?monkey=abc12345xyz",
        "a map's key=value12345 pairs", "https://example.com/?sig=short1",
        "GET /cache?key=user_12345", "https://example.com/reports?key=report2024.csv", "items?key=item-42abc"}) {
      assertEquals(url, d.apply(url), url);
    }
  }

  @Test
  void anIncomingWebhooksPathIsTaken() {
    String slack = "T0" + "4ABCDEF/B0" + "5GHIJKL/" + "aB3dE5fG7hI9jK1lM3nO5pQ7";
    assertEquals("post to https://hooks.slack.com/services/[SECRET] now",
        d.apply("post to https://hooks.slack.com/services/" + slack + " now"));
    assertEquals("https://hooks.slack.com/services/[SECRET]", d.apply("https://hooks.slack.com/services/T0000/B0000/XXXXXXXX"));
    assertEquals("hooks.slack.com/services/[SECRET]", d.apply("hooks.slack.com/services/" + slack));
    String discord = "1234567890" + "12345678/" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-AbCdEfGhIjKlMnOpQrStUvWx";
    assertEquals("https://discord.com/api/webhooks/[SECRET]", d.apply("https://discord.com/api/webhooks/" + discord));
    assertEquals("https://discordapp.com/api/webhooks/[SECRET])",
        d.apply("https://discordapp.com/api/webhooks/" + discord + ")"));
    assertEquals("curl discord.com/api/webhooks/[SECRET]", d.apply("curl discord.com/api/webhooks/" + discord));
  }

  /** The secret rule runs only on texts its pre-check lets through: each new format must pass it. */
  @Test
  void eachFormatPassesTheSecretRulesPreCheck() {
    for (String t : new String[] {"?key=", "&token=", "&sig=", "?X-Amz-Signature=", "DB_PASS=", "smtp-pass:",
        "credentials:", "credential=", "SSH_PASSPHRASE=", "hooks.slack.com/", "discord.com/api/webhooks/"}) {
      assertTrue(PiiRules.scan("x " + t).secretHint(), t);
    }
  }

  @Test
  void webhookDocsStay() {
    for (String prose : new String[] {
        "https://hooks.slack.com/services/", "see https://api.slack.com/messaging/webhooks for setup",
        "https://hooks.slack.com/services/XXX/YYY/ZZZ", "https://discord.com/api/webhooks/{webhook.id}/{webhook.token}"}) {
      assertEquals(prose, d.apply(prose), prose);
    }
  }

  /** Review t168: later parameters of a query were reached only two deep, and a key inside a short token not at all. */
  @Test
  void everyParameterOfALongQueryIsRead() {
    assertEquals("https://h.example/cb?password=&user_token=abc&csrf_token=def&api_key=[SECRET]",
        d.apply("https://h.example/cb?password=&user_token=abc&csrf_token=def&api_key=Zx9aB3cD4eF5gH6i"));
    String hf = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh";
    assertEquals("https://h.example/x?password=x&token=[SECRET]&q=1",
        d.apply("https://h.example/x?password=x&token=" + hf + "&q=1"));
  }

  /**
   * Review t168: each parameter's match ran to the end of the text, so a text of many "?pass=&" was searched
   * again from every parameter (seconds for 64 KB). A match now takes at most 256 characters of a value, and a
   * longer credential is still taken whole.
   */
  @Test
  void longQueriesStayAsSentAndLongCredentialsAreTakenWhole() {
    String hostile = "https://h.example/x" + "?pass=&".repeat(9_000);
    assertEquals(hostile, d.apply(hostile));
    String longValue = "Ab3".repeat(300); // 900 characters, a digit in every three
    assertEquals("x_token=[SECRET] next", d.apply("x_token=" + longValue + " next"));
    assertEquals("?password=[SECRET]&q=1", d.apply("?password=" + longValue + "&q=1"));
  }
}
