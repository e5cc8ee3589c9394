#!/usr/bin/env python3
"""Rewrites tests/validate/pins.json from `trainsim validate --format json`.

Run it after a change that moves a reference table's accuracy (and say why in the commit):
    python3 scripts/update_validation_pins.py [build/trainsim]
"""
import json
import pathlib
import subprocess
import sys

root = pathlib.Path(__file__).resolve().parent.parent
exe = sys.argv[1] if len(sys.argv) > 1 else str(root / "build" / "trainsim")
report = json.loads(subprocess.run([exe, "validate", "--format", "json"], check=True,
                                   capture_output=True, text=True).stdout)
pins = {}
for t in report["tables"]:
    pins.setdefault(t["name"], {})[t["half"]] = {
        "points": t["points"],
        "mape_abs_pct": round(t["mape_abs_pct"], 2),
        "mape_shape_pct": round(t["mape_shape_pct"], 2),
    }
path = root / "tests" / "validate" / "pins.json"
path.write_text(json.dumps(pins, indent=2) + "\n")
print(f"wrote {path} ({len(pins)} tables)")
