/*
 * Prints Java's TimeZone.getAvailableIDs(), one a line, with 1 when Joda-Time converts the
 * id (DateTimeZone.forTimeZone) and 0 when it throws: Druid's ParserUtils keeps exactly the
 * ids marked 1 as the zone words of the "auto" timestamp format.
 */
import java.util.TimeZone;

public final class JavaZoneIds {
  public static void main(String[] args) {
    for (String id : TimeZone.getAvailableIDs()) {
      int ok = 1;
      try {
        org.joda.time.DateTimeZone.forTimeZone(TimeZone.getTimeZone(id));
      } catch (IllegalArgumentException e) {
        ok = 0;
      }
      System.out.println(id + "\t" + ok);
    }
  }
}
