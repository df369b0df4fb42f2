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
missingValue forms (JSON int, strings with spaces, empty); Joda patterns with every letter
(G C Y x w e E D, widths, text case rules: a day of week without a day of month, eras,
centuries, weekyears resolved by Joda's two passes) and with zone names: ZZZ with every
tz-database id Joda knows (DST gaps and overlaps, far-future footer rules, local mean
time, the '/' look-ahead quirk, an offset next to a zone) and z with Joda's default short
names. Every case must agree: both OK with the same millis, or both a parse exception.
Joda-Time bundles its own tz data (2022a in Debian's 2.10.14), older than the system's
tzdata that icedruid reads: a zone case is compared only where the two agree within 36 h
of the value (offsets from tests/druid/oracle/JodaZoneWindow.java vs Python's zoneinfo on
the system files); the cases left out, and the ids only the system has, are printed. Also checks icedruid's zone-id rule
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from java_oracle import compile_oracle  # noqa: E402
out_dir = compile_oracle(BUILD, ["DruidTimestampOracle", "JavaZoneIds", "JodaZoneWindow"],
                         [JODA])
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
# ---- Joda letters G C Y x w e E, widths and text case; zone names (ZZZ, z) ---------------
import datetime as _dt
from zoneinfo import ZoneInfo

joda_ids = set(subprocess.run(["java", "-cp", CP, "JodaZoneWindow", "ids"], check=True,
                              capture_output=True, text=True).stdout.split())


def system_ids():
    """Zone ids of the system tz database, by the rule icedruid uses (TZif files, not
    posix/, right/, localtime, posixrules, Factory) - derived here independently."""
    root = os.environ.get("TZDIR") or "/usr/share/zoneinfo"
    out = set()
    for dirpath, dirs, files in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        if rel == ".":
            dirs[:] = [d for d in dirs if d not in ("posix", "right")]
        for f in files:
            name = f if rel == "." else rel + "/" + f
            if name in ("localtime", "posixrules", "Factory") or f.startswith("."):
                continue
            with open(os.path.join(dirpath, f), "rb") as fh:
                if fh.read(4) == b"TZif":
                    out.add(name)
    return out


SYS_IDS = system_ids()
SKEW_IDS = SYS_IDS - joda_ids          # newer tz releases than Joda's bundled data
COMMON_IDS = sorted(SYS_IDS & joda_ids)
if "UTC" not in COMMON_IDS:
    COMMON_IDS.append("UTC")
EPOCH = _dt.datetime(1970, 1, 1)
SHORT = {"UT": "UTC", "UTC": "UTC", "GMT": "UTC", "EST": "America/New_York",
         "EDT": "America/New_York", "CST": "America/Chicago", "CDT": "America/Chicago",
         "MST": "America/Denver", "MDT": "America/Denver", "PST": "America/Los_Angeles",
         "PDT": "America/Los_Angeles"}


def local_ms(y, m, d, hh, mi, ss):
    return (_dt.datetime(y, m, d, hh, mi, ss) - EPOCH) // _dt.timedelta(milliseconds=1)


def rand_local():
    """A wall time: mostly 1970-2037, many near DST changes (spring and autumn nights),
    some far in the future (the TZif footer's rules) and some historical (LMT)."""
    r = rng.random()
    if r < 0.35:
        y = rng.randint(1970, 2037)
    elif r < 0.45:
        y = rng.randint(2038, 2400)
    elif r < 0.55:
        y = rng.randint(1850, 1969)
    elif r < 0.6:
        y = rng.randint(1, 1849)
    else:
        y = rng.randint(1990, 2030)
    if r >= 0.6 or rng.random() < 0.3:   # DST nights
        m = rng.choice([3, 4, 10, 11, 9, 2])
        d = rng.randint(1, 28)
        hh = rng.choice([0, 1, 2, 3, 23, 22])
    else:
        m, d, hh = rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23)
    return y, m, d, hh, rng.randint(0, 59), rng.randint(0, 59)


ZONE_PATTERNS = ["yyyy-MM-dd HH:mm:ss ZZZ", "yyyy-MM-dd'T'HH:mm ZZZ", "ZZZ yyyy-MM-dd HH:mm:ss",
                 "ZZZ dd/MM/yyyy HH:mm", "yyyy-MM-dd HH:mm Z ZZZ", "MMM dd HH:mm ZZZ",
                 "yyyy-MM-dd HH:mm:ss z", "EEE MMM dd HH:mm:ss z yyyy", "yyyy-MM-dd HH:mm zzz",
                 "yyyy-MM-dd HH:mm zzzz"]
BAD_ZONES = ["America/New_Yor", "america/new_york", "Asia/Nowhere", "UTC+1", "+05:00", "Utc",
             "America/", "America", "Etc/GMT+15", "EST5", "GMT+0x", "Europe/London/x", "pst",
             "CEST", "BST", "IST", "Z"]


def zone_value(pat):
    """(text, zone id for the skew check or None, local millis)."""
    y, m, d, hh, mi, ss = rand_local()
    if "z" in pat:
        name = rng.choice(list(SHORT) + ["CET", "BST", "est", "Pst", "UT1"])
        zid = SHORT.get(name)
    else:
        name = rng.choice(COMMON_IDS) if rng.random() < 0.9 else rng.choice(BAD_ZONES)
        zid = name if name in COMMON_IDS else None
    if "MMM dd" in pat:
        y = 2000
    dw = DOW[_dt.date(y, m, d).weekday()]
    off = rng.choice(["+0000", "-0500", "+0530"])
    text = (pat.replace("yyyy", "%04d" % y).replace("MMM", MON[m - 1]).replace("MM", "%02d" % m)
            .replace("dd", "%02d" % d).replace("HH", "%02d" % hh).replace("mm", "%02d" % mi)
            .replace("ss", "%02d" % ss).replace("EEE", dw))
    text = text.replace("'T'", "T").replace("ZZZ", "\0").replace("Z", off)
    text = text.replace("zzzz", name).replace("zzz", name).replace("z", name).replace("\0", name)
    if rng.random() < 0.03:
        text = text + rng.choice([" ", "x", "/"])
    return text, zid, local_ms(y, m, d, hh, mi, ss)


FIELD_PATTERNS = ["G yyyy-MM-dd", "yyyy-MM-dd G", "GGGG YYYY-MM-dd", "YYYY-MM-dd", "Y-M-d G",
                  "CC", "C", "CCyy-MM-dd", "CC yy", "xxxx-'W'ww-e", "xxxx-ww", "xx-ww-e",
                  "xxxx-ww-e HH:mm", "ww", "w e", "yyyy ww", "yyyy-ww-e", "xxxx-MM-dd", "x",
                  "E", "EEEE", "yyyy E", "yyyy-DDD E", "yyyy-MM E", "MM-dd E", "yyyy-MM-dd E",
                  "dd E", "e", "yyyy-MM-dd e HH", "HH a", "KK a", "hh a", "kk", "dddd",
                  "yyyy-MM-dd HH:mm:ss.SSSSSSSSSSSS", "yyyy-MMM-dd", "dd MMMM yyyy G",
                  "yyyyMMdd G", "yyyy-MM-dd HH:mm a", "xxxx-'W'ww", "M/d/y", "y-D"]
ERAS = ["AD", "BC", "ad", "bc", "BCE", "CE", "ce", "bce", "Ad", "aD", "A", "B"]


def mixcase(s):
    return "".join(ch.upper() if rng.random() < 0.5 else ch.lower() for ch in s)


def field_value(pat):
    y = rng.randint(1, 3000) if rng.random() < 0.3 else rng.randint(1950, 2060)
    m, d = rng.randint(1, 12), rng.randint(1, 28 if rng.random() < 0.9 else 31)
    try:
        date = _dt.date(y, m, d)
    except ValueError:
        date = _dt.date(y, m, 28)
    wy, wk, wd = date.isocalendar()
    if rng.random() < 0.1:
        wk = rng.choice([0, 52, 53, 54])
    hh = rng.randint(0, 23)
    mon = MON[m - 1]
    if rng.random() < 0.1:
        mon = rng.choice([mon.lower(), mon.upper(), mixcase(mon), MONTHS[m - 1].upper()])
    dw = DOW[date.weekday()] if rng.random() < 0.7 else rng.choice(DOW)
    rep = {"G": rng.choice(ERAS), "GGGG": rng.choice(ERAS), "YYYY": "%04d" % (y if rng.random() < 0.95 else 0),
           "Y": str(y), "yyyy": "%04d" % y, "y": str(y if rng.random() < 0.9 else -y),
           "CC": "%02d" % (y // 100), "C": str(y // 100), "yy": "%02d" % (y % 100),
           "xxxx": "%04d" % wy, "xx": "%02d" % (wy % 100), "x": str(wy), "ww": "%02d" % wk,
           "w": str(wk), "e": str(wd if rng.random() < 0.9 else rng.randint(0, 8)),
           "E": dw, "EEEE": {"Mon": "Monday", "Tue": "Tuesday", "Wed": "Wednesday",
                             "Thu": "Thursday", "Fri": "Friday", "Sat": "Saturday",
                             "Sun": "Sunday"}[dw],
           "DDD": "%03d" % rng.randint(1, 366), "D": str(rng.randint(1, 367)),
           "MMMM": MONTHS[m - 1], "MMM": mon, "MM": "%02d" % m, "M": str(m), "dd": "%02d" % d,
           "d": str(d), "dddd": "%04d" % d, "HH": "%02d" % hh, "mm": "%02d" % rng.randint(0, 59),
           "ss": "%02d" % rng.randint(0, 59), "SSSSSSSSSSSS": "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 12))),
           "a": rng.choice(["AM", "PM", "am", "pm", "Am", "pM"]), "KK": "%02d" % rng.randint(0, 12),
           "hh": "%02d" % rng.randint(0, 13), "kk": "%02d" % rng.randint(0, 25)}
    out, i = [], 0
    while i < len(pat):
        c = pat[i]
        if c == "'":
            j = pat.index("'", i + 1)
            out.append(pat[i + 1:j])
            i = j + 1
            continue
        if c.isalpha():
            j = i
            while j < len(pat) and pat[j] == c:
                j += 1
            out.append(rep.get(pat[i:j], pat[i:j]))
            i = j
            continue
        out.append(c)
        i += 1
    return "".join(out)


def add_zone_and_field_cases():
    zc = {}
    for pat in ZONE_PATTERNS:
        for _ in range(330 if "ZZZ" in pat else 160):
            text, zid, lm = zone_value(pat)
            if zid:
                zc[len(cases)] = (zid, lm)
            add(pat, "string", text)
    for word in COMMON_IDS:                                  # every id once, in summer
        zc[len(cases)] = (word, local_ms(2021, 7, 1, 12, 0, 0))
        add("yyyy-MM-dd HH:mm ZZZ", "string", "2021-07-01 12:00 " + word)
    for pat in FIELD_PATTERNS:
        for _ in range(70):
            add(pat, "string", field_value(pat))
    return zc


def tz_skew(zone_cases):
    """Case indexes whose zone's Joda-Time rules differ from the system tzdata's within
    36 h of the value: offsets every 15 minutes and at Joda's transitions, the system's
    from Python's zoneinfo (CPython's own TZif reader)."""
    items = sorted(zone_cases.items())
    inp = "".join("%s\t%d\n" % (z, c) for _, (z, c) in items)
    out = subprocess.run(["java", "-cp", CP, "JodaZoneWindow", "window"], input=inp, check=True,
                         capture_output=True, text=True).stdout.splitlines()
    utc = _dt.timezone.utc
    base = _dt.datetime(1970, 1, 1, tzinfo=utc)
    skew = set()
    zones = {}

    def sys_off(z, ms):
        if z not in zones:
            zones[z] = ZoneInfo(z)
        t = base + _dt.timedelta(milliseconds=ms)
        return int(t.astimezone(zones[z]).utcoffset() // _dt.timedelta(milliseconds=1))

    for (i, (z, c)), line in zip(items, out):
        offs, trans = line.split("|")
        lo = c - 36 * 3600 * 1000
        try:
            if lo < -62135596800000 + 86400000 * 2 or c > 253402300799000 - 86400000 * 2:
                raise OverflowError  # outside Python's datetime: cannot check
            same = all(int(o) == sys_off(z, lo + k * 900000) for k, o in enumerate(offs.split(",")))
            for t in (trans.split(",") if trans else []):
                t = int(t)
                same = same and sys_off(z, t) != sys_off(z, t - 1000)
        except (OverflowError, ValueError):
            same = False
        if not same:
            skew.add(i)
    return skew


# Joda's field resolution: day of week without a day of month, eras, centuries, years of
# era, weekyears and weeks, text case rules, widths (formerly refused by icedruid)
for pat, val in [("E", "Mon"), ("yyyy E", "2021 Mon"), ("EEE HH:mm", "Tue 10:00"),
                 ("G yyyy", "AD 2021"), ("CC", "20"), ("xxxx-'W'ww-e", "2021-W05-3"),
                 ("ww", "05"), ("yyyy-MM-dd HH:mm ZZZ", "2021-03-04 10:00 America/New_York"),
                 ("yyyy-MM-dd HH:mm z", "2021-03-04 10:00 PST")]:
    add(pat, "string", val)
zone_cases = add_zone_and_field_cases()

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
skewed = tz_skew(zone_cases)
bad = 0
ok = 0
for i, ((f, k, v), jl, cl) in enumerate(zip(cases, java, icd)):
    if i in skewed:
        continue
    if jl != cl:
        bad += 1
        if bad <= 40:
            print("DISAGREE format=%r kind=%s value=%r druid=%s icedruid=%s"
                  % (f, k, v, jl.split("\t", 1)[1], cl.split("\t", 1)[1]))
    elif "\tOK\t" in jl:
        ok += 1
n_main = len(cases) - len(skewed)
zone_ok = sum(1 for i in zone_cases if i not in skewed and "\tOK\t" in java[i])
zone_gap = sum(1 for i in zone_cases if i not in skewed and java[i].endswith("\tERR"))
skew_diff = sum(1 for i in skewed if java[i] != icd[i])
print("zone-name cases: %d parsed, %d parse exceptions (DST gaps, bad ids, ...); of the %d "
      "not compared, %d give a different __time (the tz data versions differ there)"
      % (zone_ok, zone_gap, len(skewed), skew_diff))
if zone_ok < 1000:
    print("FAIL: too few zone-name cases parsed")
    sys.exit(1)
print("timestamp oracle: %d cases compared (%d parsed, %d parse exceptions), %d disagreements; "
      "%d of them zone-name cases (ZZZ ids, z names) with the zone's rules applied"
      % (n_main, ok, n_main - ok, bad, len(zone_cases) - len(skewed)))
print("not compared: %d zone cases where Joda-Time's bundled tz data (%d ids) differs from "
      "the system's tzdata within 36 h of the value (checked with Python's zoneinfo); "
      "ids only the system has: %s" % (len(skewed), len(joda_ids), ", ".join(sorted(SKEW_IDS))))
if n_main < 5000 or len(zone_cases) - len(skewed) < 1500:
    print("FAIL: too few cases compared")
    sys.exit(1)
if bad:
    print("%d passed, %d failed" % (n_main - bad, bad))
    sys.exit(1)
print("%d passed, 0 failed" % n_main)
