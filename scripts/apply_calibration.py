#!/usr/bin/env python3
"""Writes the values of a `trainsim calibrate --table ... --format json` run into hw_profiles/.

Each fitted value replaces the one in its profile file, and the value's source comment becomes
"calibrated on <table> (calibration half[, rows <regex>]): start -> value (stderr ...)", so every
shipped value names the data it was fitted on. A nested value's comment ("// gemm.fp16: ...") is
found in the comment block above its parent's line and its first line rewritten (continuation
lines of a hand-written comment are left for the editor). Usage:
    build/trainsim calibrate --table deepbench_gemm --free ... --format json > fit.json
    python3 scripts/apply_calibration.py fit.json
"""
import json
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
FOLDERS = {"kernels": "kernels", "framework": "frameworks", "accelerator": "accelerators",
           "host": "hosts", "link": "links", "cluster": "clusters"}


# The units a profile's quoted quantities are written in, in SI base units (sim/config/units.cpp
# reads more; these are the ones fitted values are written back in).
UNITS = {"s": 1, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "B/s": 1, "kB/s": 1e3, "MB/s": 1e6,
         "GB/s": 1e9, "TB/s": 1e12, "KiB/s": 2**10, "MiB/s": 2**20, "GiB/s": 2**30, "Hz": 1,
         "kHz": 1e3, "MHz": 1e6, "GHz": 1e9, "W": 1, "kW": 1e3}


def quoted_unit(text):
    """The unit of a quoted quantity ("7.97 GB/s" -> "GB/s") where UNITS has it, else None."""
    m = re.fullmatch(r'"[-+0-9.eE]+ ([A-Za-z/]+)"', text or "")
    return m.group(1) if m and m.group(1) in UNITS else None


def format_value(path, value, current=None):
    """The fitted SI value as the profile writes it: in the unit of the value it replaces, where
    that is a quoted quantity ("7.97 GB/s"), else by the key's kind."""
    unit = quoted_unit(current)
    if unit:
        return f'"{value / UNITS[unit]:.3g} {unit}"'
    leaf = path.split(".")[-1]
    if leaf in ("k_half",):
        return str(round(value, 1))
    if any(w in leaf for w in ("overhead", "per_kernel", "per_step", "latency")):
        us = value * 1e6
        return f'"{us:.3g} us"'
    return f"{value:.3g}"


def apply(fit):
    table = fit["table"]
    rows = fit.get("rows", ".*")
    where = f"calibrated on {table} (calibration half" + ("" if rows == ".*" else f", rows '{rows}'") + (
        {"mape": ", MAPE fit", "mape+shape": ", MAPE+shape fit"}.get(fit.get("objective"), "")) + ")"
    for p in fit["parameters"]:
        kind_name, path = p["name"].split(":", 1)
        kind, name = kind_name.split("/", 1)
        file = root / "hw_profiles" / FOLDERS[kind] / f"{name}.json"
        lines = file.read_text().split("\n")
        keys = path.split(".")
        leaf = keys[-1]
        parent = keys[-2] if len(keys) > 1 else None
        start = 0
        if parent:
            start = next(i for i, l in enumerate(lines) if f'"{parent}"' in l and not l.strip().startswith("//"))
        i = next(i for i in range(start, len(lines)) if f'"{leaf}":' in lines[i] and not lines[i].strip().startswith("//"))
        value_re = re.compile(r'("' + re.escape(leaf) + r'":\s*)("[^"]*"|[-+0-9.eE]+)')
        current = value_re.search(lines[i])
        new = format_value(path, p["value"], current.group(2) if current else None)
        err = p.get("std_error")
        # The note in the profile's unit where the value is a quoted quantity.
        unit = quoted_unit(new)
        scale, suffix = (UNITS[unit], " " + unit) if unit else (1, "")
        note = f"{where}: {p['start'] / scale:.4g} -> {p['value'] / scale:.4g}{suffix}" + (
            f" (stderr {err / scale:.2g}{suffix})" if err is not None else "")
        lines[i] = value_re.sub(lambda m: m.group(1) + new, lines[i], count=1)
        # The value's own comment, "// parent.leaf: ...", sits in the block of comment lines just
        # above the parent's line (or between it and the value's line).
        label = f"// {parent}.{leaf}:" if parent else f"// {leaf}:"
        # A top-level value's comment block sits just above its own line.
        above = (start if parent else i) - 1
        while above > 0 and lines[above - 1].strip().startswith("//"):
            above -= 1
        comment_line = next((j for j in range(max(0, above), i)
                             if lines[j].strip().startswith(label)), None)
        if comment_line is not None:
            indent = lines[comment_line][: len(lines[comment_line]) - len(lines[comment_line].lstrip())]
            lines[comment_line] = f"{indent}{label} {note}"
        elif "//" in lines[i]:
            lines[i] = lines[i][: lines[i].index("//")].rstrip() + f"  // {note}"
        else:
            lines[i] = lines[i] + f"  // {note}"
        file.write_text("\n".join(lines))
        print(f"{file.relative_to(root)}: {path} = {new}")


for arg in sys.argv[1:]:
    apply(json.loads(pathlib.Path(arg).read_text()))
