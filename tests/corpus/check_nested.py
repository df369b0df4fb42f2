#!/usr/bin/env python3
"""Round trip of values no corpus oracle holds yet (complex types, timestamptz in a
session zone, binary, NaN), through fake_scan.py's Impala -> section 3 conversion and
the harness's section 3 -> Impala normaliser. Part of check_harness.sh; not CTest."""
import json
import sys
from decimal import Decimal
import fake_scan as fake
import test_scan_oracles as h

CASES = [  # (iceberg type, value as Impala printed it, session zone)
    ("struct<A:int,B:list<int>,C:struct<D:list<list<struct<E:int,F:string>>>>,"
     "G:map<string,struct<H:struct<I:list<double>>>>>",
     '{"a":1,"b":[1,null,3],"c":{"d":[[{"e":5,"f":"x"}],[]]},'
     '"g":{"k1":{"h":{"i":[1.5,null]}},"k2":null}}', "UTC"),
    ("map<int,decimal(5,2)>", '{"1":1.5,"2":null}', "UTC"),
    ("list<timestamp>", '["2020-01-01 09:00:00","1969-12-31 23:59:59.999999000"]', "UTC"),
    ("timestamptz", "2021-10-31 02:15:00.500000000", "Europe/Budapest"),
    ("timestamptz", "2021-03-28 03:30:00", "Europe/Budapest"),
    ("binary", "h\u00e9llo", "UTC"),
    ("double", "NaN", "UTC"),
    ("float", "-Infinity", "UTC"),
    ("float", Decimal("3.4028234663852886e+38"), "UTC"),
]

bad = 0
for text, impala, tz in CASES:
    t_h, t_f = h.parse_type(text), fake.type_of(text)
    s3 = json.loads(fake.dumps(fake.impala_to_s3(impala, t_f, tz)))
    got = h.normalise_impala(s3, t_h, tz)
    want = h.parse_expected_impala(impala, t_h)
    ok = h.values_equal(want, got, t_h)
    bad += not ok
    print("%s %s %s -> %s" % ("ok  " if ok else "FAIL", text[:40], json.dumps(s3)[:100], got))
sys.exit(1 if bad else 0)
