"""Druid-side oracle for __time: icedruid's C timestamp parser against Joda-Time.

Compiles tests/druid/oracle/DruidTimestampOracle.java with javac into the build directory
(Debian's libjoda-time-java; it reimplements Druid's TimestampParser / TimestampSpec /
MapInputRowParser rules with the real Joda-Time) and feeds it and
${ICD_BUILD_DIR}/tests/ts_oracle_tool (icedruid's dr_timestamp_extract) the same generated
cases: every timestampSpec format (auto, iso, posix, millis, micro, nano, ruby, names in
other cases, Joda patterns with literals, no year, day names, 12-hour clocks, offsets, UTC
zone ids) x value kinds of the column types (Java Long for timestamp/long/int columns,
Double for float/double, String for string columns, null), with ISO variants with and
without zones, trailing zone words (every Java id that ParserUtils accepts, and non-ids),
numeric strings, negative and huge epochs beyond Druid's ETERNITY, quotes and blanks, and
missingValue forms (JSON int, strings with spaces, empty). Every case must agree: both OK
with the same millis, or both a parse exception. Also checks icedruid's zone-id rule
against the JDK's TimeZone.getAvailableIDs() on every id (derived here, at test time).
Exit 77 when javac or the Joda jar is missing.
"""
import os
import random
import subprocess
import sys
import tempfile

BUILD = os.environ.get("ICD_BUILD_DIR", "build")
SRC = os.environ.get("ICD_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
JAVA_DIR = "/usr/share/java"
JODA = os.path.join(JAVA_DIR, "joda-time.jar")
TOOL = os.path.join(BUILD, "tests", "ts_oracle_tool")
VERSION_SKEW_NOTE = []

for need, what in ((JODA, "libjoda-time-java"), ("/usr/bin/javac", "JDK 17 (javac)"),
                   (TOOL, "the ts_oracle_tool build target")):
    if not os.path.exists(need):
        print(f"SKIP: {what} not installed ({need})")
        sys.exit(77)

out_dir = os.path.join(BUILD, "tests", "oracle-classes")
os.makedirs(out_dir, exist_ok=True)
subprocess.run(["javac", "-nowarn", "-cp", JODA, "-d", out_dir,
                os.path.join(SRC, "tests", "druid", "oracle", "DruidTimestampOracle.java"),
                os.path.join(SRC, "tests", "druid", "oracle", "JavaZoneIds.java")], check=True)
CP = JODA + ":" + out_dir

# ---- Java's zone ids, at test time ---------------------------------------------------------
ids = subprocess.run(["java", "-cp", CP, "JavaZoneIds"], check=True, capture_output=True,
                     text=True).stdout.split("\n")
java_ok = set()      # Java ids Joda converts: the words Druid's "auto" drops
for line in ids:
    if line:
        zid, ok = line.split("\t")
        if ok == "1":
            java_ok.add(zid)

rng = random.Random(20)
cases = []


def add(fmt, kind, value):
    cases.append((fmt, kind, value))


def h(s):
    return s.encode("utf-8").hex()


def rand_date():
    y = rng.choice([1970, 2000, 2024, 1969, 1, 9999, 2038, 1900, 2100, 12345, 0, -1])
    if rng.random() < 0.3:
        y = rng.randint(1000, 3000)
    m = rng.randint(1, 12)
    d = rng.randint(1, 31 if rng.random() < 0.2 else 28)
    return y, m, d


def ystr(y):
    return ("-%04d" % -y) if y < 0 else ("%04d" % y)


def iso_text(space=False):
    y, m, d = rand_date()
    s = "%s-%02d-%02d" % (ystr(y), m, d)
    r = rng.random()
    if r < 0.1:
        s = "%s-%02d" % (ystr(y), m)
    elif r < 0.15:
        s = ystr(y)
    elif r < 0.2:
        s = "%s-W%02d-%d" % (ystr(y), rng.randint(1, 53), rng.randint(1, 7))
    elif r < 0.25:
        s = "%s-%03d" % (ystr(y), rng.randint(1, 366))
    if rng.random() < 0.8:
        s += rng.choice(["T", "T", " ", "t"] if space else ["T", "T", "t"])
        hh = rng.randint(0, 24 if rng.random() < 0.05 else 23)
        t = "%02d" % hh
        if rng.random() < 0.9:
            t += ":%02d" % rng.randint(0, 59)
            if rng.random() < 0.8:
                t += ":%02d" % rng.randint(0, 60 if rng.random() < 0.03 else 59)
                if rng.random() < 0.5:
                    t += rng.choice([".", ","]) + "".join(
                        rng.choice("0123456789") for _ in range(rng.randint(1, 9)))
        s += t
        r = rng.random()
        if r < 0.25:
            s += rng.choice(["Z", "z"])
        elif r < 0.55:
            off_h = rng.randint(0, 14)
            sign = rng.choice("+-")
            s += rng.choice([
                "%s%02d" % (sign, off_h), "%s%02d:%02d" % (sign, off_h, rng.choice([0, 30, 45])),
                "%s%02d%02d" % (sign, off_h, rng.choice([0, 30])), "%s%d" % (sign, off_h)])
    return s


ZONE_WORDS = sorted(java_ok)
NON_IDS = ["+05:00", "Asia/Nowhere", "XYZ", "utc", "pst", "Z", "GMT+0", "Factory", "ROC",
           "SystemV/EST5", "posixrules", "localtime", "America/", "../etc/passwd", "right/UTC",
           "posix/UTC", "Etc", "America"]


def auto_string():
    r = rng.random()
    if r < 0.5:
        return iso_text(space=True)
    if r < 0.75:
        word = rng.choice(ZONE_WORDS) if rng.random() < 0.7 else rng.choice(NON_IDS)
        base = iso_text(space=True)
        return base + " " + word
    if r < 0.9:
        return numeric_string()
    return rng.choice(['"%s"' % iso_text(), "  %s  " % iso_text(), " \"%s\" " % iso_text(), "",
                       " ", '"', '""', "null", "abc", "2020-01-01 ", " 2020", "T10:00",
                       "2020-01-01T", "2020-01-01T10:00:00.000Z UTC", "2020-02-29", "2021-02-29",
                       "2020-01-01 10:00 PST PST"])


def numeric_string():
    r = rng.random()
    if r < 0.3:
        return str(rng.randint(-10**13, 10**13))
    if r < 0.45:
        return str(rng.choice([2**62, 2**62 - 1, 2**62 - 2, -2**62, -2**62 - 1, 2**63 - 1, -2**63,
                               2**63, 10**19, 4611686018427387903, 4611686018427387902]))
    if r < 0.6:
        return rng.choice(["+", "-", ""]) + str(rng.randint(0, 10**12))
    if r < 0.75:
        return "%.3f" % rng.uniform(-1e10, 1e10)
    if r < 0.85:
        return rng.choice(["1e3", "1.5E9", "NaN", "Infinity", "-Infinity", "0x10", "1_000",
                           "12 34", "1.", ".5", "1d", "1f", "  42  ", '"42"', "0042",
                           "99999999999999999999"])
    return str(rng.randint(0, 99999))  # short digit runs: years in "iso", millis in "auto"


def rand_long():
    r = rng.random()
    if r < 0.5:
        return rng.randint(-10**13, 10**13)
    if r < 0.7:
        return rng.randint(-10**18, 10**18)
    return rng.choice([0, -1, 1, 2**62, 2**62 - 1, 2**62 - 2, -2**62, -2**62 - 1, 2**63 - 1,
                       -2**63, 4611686018427387903 // 1000, 4611686018427387904 // 1000 + 1,
                       9223372036854775807 // 1000, 1700000000, 1700000000000,
                       1700000000000000, 1700000000000000000])


def rand_double():
    r = rng.random()
    if r < 0.4:
        return repr(rng.uniform(-1e13, 1e13))
    if r < 0.6:
        return repr(float(rng.randint(-10**10, 10**10)) + rng.choice([0, 0.5, 0.25, 0.999]))
    return rng.choice(["0.0", "-0.0", "1.0E10", "4.611686018427388E18", "9.3E18", "-9.3E18",
                       "1700000000.123", "1.7E12", "NaN", "Infinity", "-Infinity", "1.0E-5",
                       "123456789.987654321"])


NUMERIC = ["auto", "iso", "posix", "millis", "micro", "nano", "ruby", "AUTO", "Millis", "ISO",
           "Posix"]
for fmt in NUMERIC:
    for _ in range(150):
        add(fmt, "long", str(rand_long()))
    for _ in range(80):
        add(fmt, "double", rand_double())
    for _ in range(150):
        add(fmt, "string", numeric_string())
    for _ in range(120 if fmt.lower() != "auto" else 700):
        add(fmt, "string", auto_string() if fmt.lower() == "auto" else iso_text())
    add(fmt, "null", "")
for word in ZONE_WORDS:                      # every accepted word once
    add("auto", "string", "2021-03-04 05:06:07 " + word)
for word in NON_IDS:
    add("auto", "string", "2021-03-04 05:06:07 " + word)

MON = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]
DOW = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]


def dow_of(y, m, d):
    import datetime
    return datetime.date(y, m, d).weekday()


def pattern_value(pat):
    y = rng.randint(1950, 2060)
    m = rng.randint(1, 12)
    d = rng.randint(1, 28 if rng.random() < 0.9 else 31)
    if rng.random() < 0.05:
        m, d = 2, 29
    hh, mi, ss = rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59)
    ms = rng.randint(0, 999)
    off = rng.choice(["+0000", "-0800", "+0530", "+1400", "Z", "-0000"])
    try:
        dw = DOW[dow_of(y, m, min(d, 28))] if rng.random() < 0.8 else rng.choice(DOW)
    except ValueError:
        dw = "Mon"
    rep = {
        "yyyy": "%04d" % y, "yy": "%02d" % (y % 100), "MMMM": MONTHS[m - 1], "MMM": MON[m - 1],
        "MM": "%02d" % m, "dd": "%02d" % d, "d": str(d), "HH": "%02d" % hh, "H": str(hh),
        "hh": "%02d" % (hh % 12 or 12), "mm": "%02d" % mi, "ss": "%02d" % ss,
        "SSS": "%03d" % ms, "SS": "%02d" % (ms // 10), "S": str(ms // 100), "a": "AM" if hh < 12 else "PM",
        "ZZ": off if off == "Z" else off[:3] + ":" + off[3:], "Z": off, "EEE": dw,
        "EEEE": {"Mon": "Monday", "Tue": "Tuesday", "Wed": "Wednesday", "Thu": "Thursday",
                 "Fri": "Friday", "Sat": "Saturday", "Sun": "Sunday"}[dw],
        "DDD": "%03d" % rng.randint(1, 366), "kk": "%02d" % (hh or 24), "KK": "%02d" % (hh % 12),
        "ZZZ": rng.choice(["UTC", "GMT", "Etc/UTC", "UT", "Zulu"]),
        "e": str(rng.randint(1, 7)), "MMMMx": "",
    }
    out, i = [], 0
    while i < len(pat):
        c = pat[i]
        if c == "'":
            j = pat.index("'", i + 1)
            out.append(pat[i + 1:j] if j > i + 1 else "'")
            i = j + 1
            continue
        if c.isalpha():
            j = i
            while j < len(pat) and pat[j] == c:
                j += 1
            tokn = pat[i:j]
            out.append(rep.get(tokn, tokn))
            i = j
            continue
        out.append(c)
        i += 1
    s = "".join(out)
    r = rng.random()
    if r < 0.08 and s:
        k = rng.randrange(len(s))
        s = s[:k] + rng.choice("0123456789 :-/xT") + s[k + 1:]
    elif r < 0.12:
        s = s[: rng.randrange(len(s) + 1)]
    elif r < 0.16:
        s = rng.choice(['"%s"' % s, " %s " % s, s + " ", s.lower(), s.upper()])
    return s


PATTERNS = ["yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd'T'HH:mm:ss.SSSZ", "yyyy-MM-dd'T'HH:mm:ss.SSSZZ",
            "dd/MMM/yyyy:HH:mm:ss Z", "MMM dd HH:mm:ss", "MMM d HH:mm:ss", "EEE, dd MMM yyyy HH:mm:ss Z",
            "yyyyMMddHHmmss", "yyyyMMdd", "yyyy-MM-dd", "MM/dd/yyyy hh:mm:ss a", "HH:mm",
            "dd MMMM yyyy", "yy-MM-dd HH:mm", "yyyy-MM-dd HH:mm:ss ZZZ", "yyyy-DDD",
            "EEEE dd MMMM yyyy", "dd-MM HH", "yyyy-MM-dd kk:mm", "yyyy-MM-dd KK:mm a",
            "yyyy-MM-dd'T'HH:mm:ss.S", "yyyy-MM-dd'T'HH:mm:ss.SS", "'ts='yyyy-MM-dd", "MM-dd",
            "yyyy-MM-dd e", "''yyyy''"]
for pat in PATTERNS:
    for _ in range(90):
        add(pat, "string", pattern_value(pat))
    for _ in range(8):
        add(pat, "long", str(rand_long()))
        add(pat, "double", rand_double())
    add(pat, "null", "")
for bad in ["yyyy-MM-dd q", "yyyy-MM-dd'T", "bogus", "yyyy-MM-dd 'unterminated"]:
    add(bad, "string", "2020-01-01")
# Joda field combinations icedruid refuses at spec load (ICD_EUNSUPPORTED, one clear
# message) rather than risk a different __time: Joda's two-pass field resolution for a day
# of week without a day of month, and the letters G C x w; zone names other than UTC ids.
REFUSED = [("E", "Mon"), ("yyyy E", "2021 Mon"), ("EEE HH:mm", "Tue 10:00"),
           ("G yyyy", "AD 2021"), ("CC", "20"), ("xxxx-'W'ww-e", "2021-W05-3"), ("ww", "05"),
           ("yyyy-MM-dd HH:mm ZZZ", "2021-03-04 10:00 America/New_York"),
           ("yyyy-MM-dd HH:mm z", "2021-03-04 10:00 PST")]
refused_from = len(cases)
for pat, val in REFUSED:
    add(pat, "string", val)

for _ in range(120):                          # missingValue forms
    add("auto", "mvint", str(rand_long()))
    add("auto", "mvstr", rng.choice(["", "  ", " ", "\t"]) + iso_text() + rng.choice(["", " ", "  "]))
for mv in ["", "   ", "2000-01-01", " 2000-01-01T00:00:00Z ", "2000-01-01T00:00:00+05:00",
           "2000-01-01 00:00:00", "946684800000", "T10:00", "garbage"]:
    add("millis", "mvstr", mv)

# ---- run both sides ----------------------------------------------------------------------
lines = "".join("%d\t%s\t%s\t%s\n" % (i, h(f), k, h(v)) for i, (f, k, v) in enumerate(cases))
java = subprocess.run(["java", "-cp", CP, "DruidTimestampOracle"], input=lines, check=True,
                      capture_output=True, text=True).stdout.splitlines()
icd = subprocess.run([TOOL], input=lines, check=True, capture_output=True,
                     text=True).stdout.splitlines()
assert len(java) == len(cases) == len(icd), (len(java), len(cases), len(icd))
bad = 0
ok = 0
refused = 0
for i, ((f, k, v), jl, cl) in enumerate(zip(cases, java, icd)):
    if refused_from <= i < refused_from + len(REFUSED):
        # refused by icedruid with a clear error, never a silently different value
        if cl.endswith("\tUNSUPPORTED"):
            refused += 1
        elif jl != cl:
            bad += 1
            print("NOT REFUSED format=%r value=%r druid=%s icedruid=%s" % (f, v, jl, cl))
        continue
    if jl != cl:
        bad += 1
        if bad <= 40:
            print("DISAGREE format=%r kind=%s value=%r druid=%s icedruid=%s"
                  % (f, k, v, jl.split("\t", 1)[1], cl.split("\t", 1)[1]))
    elif "\tOK\t" in jl:
        ok += 1
n_main = len(cases) - len(REFUSED)
print("timestamp oracle: %d cases (%d parsed, %d parse exceptions), %d disagreements; "
      "%d of %d formats refused by icedruid at spec load (not implemented)"
      % (n_main, ok, n_main - ok, bad, refused, len(REFUSED)))
if len(cases) < 5000:
    print("FAIL: fewer than 5000 cases")
    sys.exit(1)
if bad:
    print("%d passed, %d failed" % (len(cases) - bad, bad))
    sys.exit(1)
print("%d passed, 0 failed" % len(cases))
