#!/usr/bin/env python3
"""Write icedruid's Iceberg test tables (see tests/tools/README.md).

  make_fixture.py examples   OUT [--location-prefix P]   demo/orders + demo/events under OUT
  make_fixture.py edge-cases OUT [--location-prefix P] [--only NAME ...]
                                                         planner edge cases + <name>.json
  make_fixture.py alltypes   OUT [--location-prefix P]   every primitive type + alltypes.json

Paths inside the metadata start with the location prefix, not with OUT; readers map one
to the other with `icedruid ... --remap PREFIX=OUT`.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from icewriter import fixtures  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["examples", "edge-cases", "alltypes"])
    ap.add_argument("out", help="output directory (created if missing)")
    ap.add_argument("--location-prefix", help="prefix of every path written into the metadata")
    ap.add_argument("--only", nargs="*", choices=sorted(fixtures.EDGE_CASES),
                    help="edge-cases: write only these tables")
    args = ap.parse_args(argv)

    os.makedirs(args.out, exist_ok=True)
    if args.what == "examples":
        prefix = args.location_prefix or fixtures.EXAMPLE_PREFIX
        for t in fixtures.write_examples(args.out, prefix.rstrip("/")):
            print(f"{t.root}: location {t.location}, {len(t.snapshots)} snapshots")
    elif args.what == "edge-cases":
        prefix = args.location_prefix or fixtures.EDGE_PREFIX
        for d in fixtures.write_edge_cases(args.out, prefix.rstrip("/"), args.only):
            print(f"{os.path.join(args.out, d['name'])}: {d['description'][:70]}...")
    else:
        prefix = args.location_prefix or fixtures.EDGE_PREFIX
        t = fixtures.write_alltypes(args.out, prefix.rstrip("/"))
        print(f"{t.root}: location {t.location}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
