package io.otl.http.otlp;

import java.io.ByteArrayOutputStream;
import java.util.zip.CRC32;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

/**
 * Decodes a gzip body (RFC 1952, one member or several concatenated) whole, or says why not.
 * {@code GZIPInputStream} ends silently at bytes after a member that do not start another one, and
 * a second member cut short inside its first 26 bytes is never read: the request was a 200 that
 * stored part of it and dropped the rest, where the JSON bodies refuse any data after the document.
 */
final class StrictGunzip {

  /** Why a body is not valid gzip; the message never quotes the body. */
  static final class Invalid extends Exception {
    Invalid(String message) {
      super(message, null, false, false);
    }
  }

  /** The decoded body grew past the limit. */
  static final class TooLarge extends Exception {
    TooLarge() {
      super(null, null, false, false);
    }
  }

  private static final int FHCRC = 2;
  private static final int FEXTRA = 4;
  private static final int FNAME = 8;
  private static final int FCOMMENT = 16;

  private StrictGunzip() {}

  static byte[] decode(byte[] body, long maxDecodedBytes) throws Invalid, TooLarge {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int pos = 0;
    do {
      pos = member(body, pos, out, maxDecodedBytes);
    } while (pos < body.length);
    return out.toByteArray();
  }

  /** Decodes the member at {@code pos} into {@code out}; returns where the next one starts. */
  private static int member(byte[] in, int pos, ByteArrayOutputStream out, long max) throws Invalid, TooLarge {
    if (in.length - pos < 2 || (in[pos] & 0xff) != 0x1f || (in[pos + 1] & 0xff) != 0x8b) {
      throw new Invalid(pos == 0 ? "it does not start with a gzip header"
          : (in.length - pos) + " bytes follow the end of the gzip stream and are no gzip member");
    }
    int p = pos + 10;
    if (p > in.length) throw truncated();
    if ((in[pos + 2] & 0xff) != 8) throw new Invalid("its compression method is not deflate");
    int flags = in[pos + 3] & 0xff;
    if ((flags & FEXTRA) != 0) {
      if (p + 2 > in.length) throw truncated();
      p += 2 + ((in[p] & 0xff) | (in[p + 1] & 0xff) << 8);
    }
    if ((flags & FNAME) != 0) p = afterZero(in, p);
    if ((flags & FCOMMENT) != 0) p = afterZero(in, p);
    if ((flags & FHCRC) != 0) p += 2;
    if (p > in.length) throw truncated();

    Inflater inflater = new Inflater(true);
    CRC32 crc = new CRC32();
    long size = 0;
    try {
      inflater.setInput(in, p, in.length - p);
      byte[] buf = new byte[8192];
      while (!inflater.finished()) {
        int n = inflater.inflate(buf);
        if (n == 0 && !inflater.finished()) {
          if (inflater.needsInput()) throw truncated();
          throw new Invalid("its compressed data is not valid deflate data");
        }
        size += n;
        if (out.size() + n > max) throw new TooLarge();
        crc.update(buf, 0, n);
        out.write(buf, 0, n);
      }
      p = in.length - inflater.getRemaining();
    } catch (DataFormatException e) {
      throw new Invalid("its compressed data is not valid deflate data");
    } finally {
      inflater.end();
    }
    if (p + 8 > in.length) throw truncated();
    if (littleEndian(in, p) != crc.getValue() || littleEndian(in, p + 4) != (size & 0xffffffffL)) {
      throw new Invalid("its CRC-32 or length does not match the data (the body is corrupted)");
    }
    return p + 8;
  }

  private static int afterZero(byte[] in, int p) throws Invalid {
    while (p < in.length && in[p] != 0) p++;
    if (p >= in.length) throw truncated();
    return p + 1;
  }

  private static long littleEndian(byte[] in, int p) {
    return (in[p] & 0xffL) | (in[p + 1] & 0xffL) << 8 | (in[p + 2] & 0xffL) << 16 | (in[p + 3] & 0xffL) << 24;
  }

  private static Invalid truncated() {
    return new Invalid("it ends before the gzip stream does (truncated)");
  }
}
