/*
 * Druid-side oracle for icedruid's timestamp parser (tests/druid/test_timestamp_oracle.py).
 *
 * Reimplements, from Druid's documented rules and with the real Joda-Time library, what a
 * Druid ingestion task computes for __time:
 *   - org.apache.druid.java.util.common.parsers.TimestampParser (createObjectTimestampParser:
 *     Numbers go to the numeric parser for the numeric formats and "auto", everything else
 *     is parsed from toString(); "auto" = all digits -> Long millis, else stripQuotes, an
 *     optional trailing zone word (ParserUtils.getDateTimeZone: Java's
 *     TimeZone.getAvailableIDs() that Joda can convert) and the ISO date + optional
 *     ('T'|' ') time + offset parser; "iso" = DateTimes.of (Joda's ISO dateTimeParser, then
 *     Long.valueOf as a fallback); posix/millis/micro/nano = Long.parseLong + TimeUnit;
 *     ruby = Double.parseDouble * 1000; anything else = DateTimeFormat.forPattern in UTC);
 *   - org.apache.druid.data.input.impl.TimestampSpec (null -> missingValue) and
 *     JodaStuff's DateTime deserializer for missingValue (JSON int = millis, string trimmed,
 *     empty = none, else ISO dateTimeParser with the offset kept);
 *   - org.apache.druid.data.input.impl.MapInputRowParser.parseTimestamp (the row fails unless
 *     Intervals.ETERNITY contains the instant).
 * Written for this test; no Druid code is copied.
 *
 * stdin: one case a line, "ID \t FORMAT \t KIND \t HEX(VALUE)", KIND one of
 *   null | long | double | string        the timestamp column's value as a Java object
 *   mvint | mvstr                        the spec's missingValue (JSON int / string), row value null
 * stdout: "ID \t OK \t MILLIS" or "ID \t ERR" (a parse exception / invalid spec), one a line.
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import java.util.TimeZone;
import java.util.concurrent.TimeUnit;
import org.joda.time.DateTime;
import org.joda.time.DateTimeZone;
import org.joda.time.chrono.ISOChronology;
import org.joda.time.format.DateTimeFormat;
import org.joda.time.format.DateTimeFormatter;
import org.joda.time.format.DateTimeFormatterBuilder;
import org.joda.time.format.DateTimeParser;
import org.joda.time.format.ISODateTimeFormat;

public final class DruidTimestampOracle {
  static final long ETERNITY_START = Long.MIN_VALUE / 2; // JodaUtils.MIN_INSTANT
  static final long ETERNITY_END = Long.MAX_VALUE / 2; // JodaUtils.MAX_INSTANT (exclusive)

  static final Set<String> ZONE_WORDS = new HashSet<>();

  static {
    for (String id : TimeZone.getAvailableIDs()) {
      try {
        DateTimeZone.forTimeZone(TimeZone.getTimeZone(id));
        ZONE_WORDS.add(id);
      } catch (IllegalArgumentException e) {
        // not convertible to a Joda zone: Druid leaves it out of its lookup as well
      }
    }
  }

  static final DateTimeFormatter AUTO = buildAuto();
  static final DateTimeFormatter WITH_OFFSET =
      ISODateTimeFormat.dateTimeParser().withOffsetParsed().withChronology(ISOChronology.getInstanceUTC());

  static DateTimeFormatter buildAuto() {
    DateTimeFormatter offset = new DateTimeFormatterBuilder().appendTimeZoneOffset("Z", true, 2, 4).toFormatter();
    DateTimeParser sep = new DateTimeFormatterBuilder()
        .append(null, new DateTimeParser[] {
            new DateTimeFormatterBuilder().appendLiteral('T').toParser(),
            new DateTimeFormatterBuilder().appendLiteral(' ').toParser()})
        .appendOptional(ISODateTimeFormat.timeElementParser().getParser())
        .appendOptional(offset.getParser())
        .toParser();
    return new DateTimeFormatterBuilder()
        .append(ISODateTimeFormat.dateElementParser())
        .appendOptional(sep)
        .toFormatter()
        .withChronology(ISOChronology.getInstanceUTC());
  }

  static String stripQuotes(String s) {
    s = s.trim();
    if (s.charAt(0) == '"' && s.charAt(s.length() - 1) == '"') s = s.substring(1, s.length() - 1).trim();
    return s;
  }

  static boolean isNumericFormat(String f) {
    for (String n : new String[] {"auto", "millis", "posix", "micro", "nano", "ruby"})
      if (n.equalsIgnoreCase(f)) return true;
    return false;
  }

  static long numeric(String f, Number n) {
    if ("posix".equalsIgnoreCase(f)) return TimeUnit.SECONDS.toMillis(n.longValue());
    if ("micro".equalsIgnoreCase(f)) return TimeUnit.MICROSECONDS.toMillis(n.longValue());
    if ("nano".equalsIgnoreCase(f)) return TimeUnit.NANOSECONDS.toMillis(n.longValue());
    if ("ruby".equalsIgnoreCase(f)) return Double.valueOf(n.doubleValue() * 1000).longValue();
    return n.longValue();
  }

  static boolean empty(String s) {
    return s == null || s.isEmpty();
  }

  static long fromString(String f, String in) {
    if (empty(in)) throw new IllegalArgumentException("null timestamp");
    if ("auto".equalsIgnoreCase(f)) {
      for (int i = 0; i < in.length(); i++) {
        if (in.charAt(i) < '0' || in.charAt(i) > '9') {
          in = stripQuotes(in);
          int last = in.lastIndexOf(' ');
          if (last > 0 && ZONE_WORDS.contains(in.substring(last + 1))) in = in.substring(0, last);
          return AUTO.parseDateTime(in).getMillis(); // withZone keeps the instant
        }
      }
      return Long.parseLong(in);
    }
    if ("iso".equalsIgnoreCase(f)) {
      String s = stripQuotes(in);
      try {
        return new DateTime(s, ISOChronology.getInstanceUTC()).getMillis();
      } catch (IllegalArgumentException e) {
        try {
          return new DateTime(Long.valueOf(s), ISOChronology.getInstanceUTC()).getMillis();
        } catch (IllegalArgumentException e2) {
          throw e;
        }
      }
    }
    if ("posix".equalsIgnoreCase(f) || "millis".equalsIgnoreCase(f) || "micro".equalsIgnoreCase(f)
        || "nano".equalsIgnoreCase(f))
      return numeric(f, Long.parseLong(stripQuotes(in)));
    if ("ruby".equalsIgnoreCase(f)) return numeric(f, Double.parseDouble(stripQuotes(in)));
    return DateTimeFormat.forPattern(f).withChronology(ISOChronology.getInstanceUTC())
        .parseDateTime(stripQuotes(in)).getMillis();
  }

  static String unhex(String h) {
    byte[] b = new byte[h.length() / 2];
    for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
    return new String(b, StandardCharsets.UTF_8);
  }

  /** Returns the instant, or null when Druid would throw a parse exception. */
  static Long evaluate(String format, String kind, String value) {
    Long ms;
    try {
      if (!isNumericFormat(format) && !"iso".equalsIgnoreCase(format))
        DateTimeFormat.forPattern(format); // spec validation: IAE "Unable to parse timestamps"
      switch (kind) {
        case "null": ms = null; break;
        case "long": {
          Long v = Long.valueOf(value);
          ms = isNumericFormat(format) ? numeric(format, v) : fromString(format, v.toString());
          break;
        }
        case "double": {
          Double v = Double.valueOf(value);
          ms = isNumericFormat(format) ? numeric(format, v) : fromString(format, v.toString());
          break;
        }
        case "string": ms = fromString(format, value); break;
        case "mvint": ms = Long.valueOf(value); break;
        case "mvstr": {
          String s = value.trim();
          ms = s.isEmpty() ? null : WITH_OFFSET.parseDateTime(s).getMillis();
          break;
        }
        default: throw new IllegalStateException(kind);
      }
    } catch (RuntimeException e) {
      return null;
    }
    if (ms == null) return null; // Timestamp[null] is unparseable
    if (ms < ETERNITY_START || ms >= ETERNITY_END) return null; // ETERNITY.contains
    return ms;
  }

  public static void main(String[] args) throws Exception {
    BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintWriter w = new PrintWriter(System.out);
    String line;
    while ((line = r.readLine()) != null) {
      String[] p = line.split("\t", -1);
      Long ms = evaluate(unhex(p[1]), p[2], unhex(p[3]));
      w.println(p[0] + "\t" + (ms == null ? "ERR" : "OK\t" + ms));
    }
    w.flush();
  }
}
