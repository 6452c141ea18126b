package io.otl.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Locale;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.junit.jupiter.api.Test;

class ContentEncodingTest {

  /** Lower-cased with the default locale, GZIP was gzıp on a Turkish machine: a gzip body refused with 415. */
  @Test
  void anUpperCaseEncodingIsTheSameInEveryDefaultLocale() {
    Locale before = Locale.getDefault();
    try {
      Locale.setDefault(Locale.forLanguageTag("tr-TR"));
      assertEquals("gzip", ContentEncoding.of(request("GZIP")));
      assertEquals("identity", ContentEncoding.of(request(" IDENTITY ")));
    } finally {
      Locale.setDefault(before);
    }
    assertEquals("identity", ContentEncoding.of(HttpRequest.POST("/v1/traces")), "no header: not encoded");
  }

  private static HttpRequest request(String encoding) {
    return HttpRequest.POST("/v1/traces").addHeader(RawHeader.create("Content-Encoding", encoding));
  }
}
