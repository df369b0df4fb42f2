/*
 * Druid-side oracle for the NDJSON icedruid serves (tests/druid/test_ndjson_jackson.py):
 * fetches every split URL with HttpURLConnection and parses each line with Jackson the way
 * Druid's json inputFormat does (org.apache.druid.data.input.impl.JsonInputFormat /
 * JsonLineReader: one ObjectMapper readTree per line, the spec's featureSpec
 * ALLOW_NON_NUMERIC_NUMBERS enabled; JSONFlattenerMaker's value conversion: integral
 * numbers -> Long, other numbers -> Double, text -> String, arrays -> List, objects -> Map).
 * Written for this test; no Druid code is copied.
 *
 * Args: URL... (http: a served split; file: rows `icedruid read` wrote); stdout: one line per row, a JSON object whose values are typed strings
 * ("L:5", "D:1.5", "S:x", "Z:true", null, lists, maps), then a last line
 * "RANGE <status> <ok|mismatch>" from resuming the first URL at half its length with a
 * Range request (206 = the server honoured it; 200 = it sent the whole body again).
 */
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public final class DruidJsonReaderOracle {
  static final ObjectMapper DRUID = new ObjectMapper();
  static final ObjectMapper OUT = new ObjectMapper();

  static {
    DRUID.configure(JsonParser.Feature.ALLOW_NON_NUMERIC_NUMBERS, true); // featureSpec
  }

  static Object convert(JsonNode v) {
    if (v == null || v.isNull()) return null;
    if (v.isIntegralNumber() && v.canConvertToLong()) return "L:" + v.asLong();
    if (v.isNumber()) return "D:" + v.asDouble();
    if (v.isTextual()) return "S:" + v.asText();
    if (v.isBoolean()) return "Z:" + v.asBoolean();
    if (v.isArray()) {
      List<Object> l = new ArrayList<>();
      for (JsonNode e : v) l.add(convert(e));
      return l;
    }
    Map<String, Object> m = new LinkedHashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = v.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      m.put(e.getKey(), convert(e.getValue()));
    }
    return m;
  }

  static byte[] fetch(String url, String range, int[] status) throws Exception {
    if (url.startsWith("file:")) { // rows written by `icedruid read` (no Range to test)
      status[0] = 0;
      return java.nio.file.Files.readAllBytes(java.nio.file.Paths.get(new java.net.URI(url)));
    }
    HttpURLConnection c = (HttpURLConnection) new URL(url).openConnection();
    if (range != null) c.setRequestProperty("Range", range);
    status[0] = c.getResponseCode();
    try (InputStream in = c.getInputStream()) {
      ByteArrayOutputStream b = new ByteArrayOutputStream();
      in.transferTo(b);
      return b.toByteArray();
    }
  }

  public static void main(String[] args) throws Exception {
    StringBuilder out = new StringBuilder();
    byte[] first = null;
    int[] st = new int[1];
    for (String url : args) {
      byte[] body = fetch(url, null, st);
      if (first == null) first = body;
      for (String line : new String(body, StandardCharsets.UTF_8).split("\n")) {
        if (line.isEmpty()) continue;
        JsonNode row = DRUID.readTree(line);
        if (!(row instanceof ObjectNode)) throw new IllegalStateException("not an object: " + line);
        out.append(OUT.writeValueAsString(convert(row))).append('\n');
      }
    }
    String range = "RANGE none";
    if (first != null && args.length > 0 && !args[0].startsWith("file:")) {
      int half = first.length / 2;
      byte[] rest = fetch(args[0], "bytes=" + half + "-", st);
      boolean ok;
      if (st[0] == 206) ok = Arrays.equals(rest, Arrays.copyOfRange(first, half, first.length));
      else ok = Arrays.equals(rest, first);
      range = "RANGE " + st[0] + " " + (ok ? "ok" : "mismatch");
    }
    out.append(range).append('\n');
    System.out.print(out);
  }
}
