// Resumes a download the way Druid's HttpEntity.openInputStream(uri, user, password, offset)
// does (JDK HttpURLConnection, no extra library): a `Range: bytes=OFFSET-` request; when the
// answer does not say `Accept-Ranges: bytes`, Druid skips OFFSET bytes of the body itself.
// Used by tests/druid/test_serve_files.py against `icedruid serve`'s files.
//
//   java HttpRangeResume URL OFFSET
//
// Prints one line: STATUS ACCEPT_RANGES CONTENT_RANGE(or -) CONTENT_LENGTH SHA256(rest) where
// rest is the body from OFFSET on, as Druid's reader would see it.
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.security.MessageDigest;

public class HttpRangeResume {
  public static void main(String[] args) throws Exception {
    String url = args[0];
    long offset = Long.parseLong(args[1]);
    HttpURLConnection c = (HttpURLConnection) new URL(url).openConnection();
    if (offset > 0) c.addRequestProperty("Range", "bytes=" + offset + "-");
    int status = c.getResponseCode();
    String ar = c.getHeaderField("Accept-Ranges");
    String cr = c.getHeaderField("Content-Range");
    long len = c.getContentLengthLong();
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    try (InputStream in = c.getInputStream()) {
      // HttpEntity: without Accept-Ranges: bytes the server sent the whole body
      if (offset > 0 && !"bytes".equals(ar)) in.skipNBytes(offset);
      in.transferTo(b);
    }
    byte[] d = MessageDigest.getInstance("SHA-256").digest(b.toByteArray());
    StringBuilder hex = new StringBuilder();
    for (byte x : d) hex.append(String.format("%02x", x));
    System.out.println(status + " " + ar + " " + (cr == null ? "-" : cr.replace(' ', '_')) + " "
        + len + " " + hex);
  }
}
