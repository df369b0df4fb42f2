/*
 * Joda-Time's own zone data, for tests/druid/test_timestamp_oracle.py to tell a rule
 * difference from a tz-database version difference (Joda-Time bundles its own compiled
 * tz data, older than the system's tzdata that icedruid reads).
 *
 *   java JodaZoneWindow ids      DateTimeZone.getAvailableIDs(), one a line
 *   java JodaZoneWindow window   stdin: "ZONE \t CENTER_MS" lines; stdout per line: the
 *                                offsets (ms) at CENTER - 36h + k * 15min, k = 0..288, then
 *                                "|" and the transitions in that window, comma-separated
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import org.joda.time.DateTimeZone;

public final class JodaZoneWindow {
  static final long H36 = 36L * 3600 * 1000;
  static final long STEP = 15L * 60 * 1000;

  public static void main(String[] args) throws Exception {
    PrintWriter w = new PrintWriter(System.out);
    if (args.length > 0 && args[0].equals("ids")) {
      for (String id : DateTimeZone.getAvailableIDs()) w.println(id);
      w.flush();
      return;
    }
    BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = r.readLine()) != null) {
      String[] p = line.split("\t");
      DateTimeZone z = DateTimeZone.forID(p[0]);
      long c = Long.parseLong(p[1]);
      StringBuilder b = new StringBuilder();
      for (int k = 0; k <= 288; k++) {
        if (k > 0) b.append(',');
        b.append(z.getOffset(c - H36 + k * STEP));
      }
      b.append('|');
      long t = c - H36;
      boolean first = true;
      for (int guard = 0; guard < 50; guard++) {
        long n = z.nextTransition(t);
        if (n == t || n > c + H36) break;
        if (!first) b.append(',');
        b.append(n);
        first = false;
        t = n;
      }
      w.println(b);
    }
    w.flush();
  }
}
