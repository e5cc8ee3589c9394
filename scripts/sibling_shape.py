#!/usr/bin/env python3
"""How well one GPU's measured kernel times predict another's shape, against the model's.

The kernel tables' shape MAPE (`trainsim validate`) divides each series (one GPU, one precision,
one pass: "p100-sxm2-16gb fp32 conv bwd_inputs") by its mean, measured and simulated apart, and
averages |simulated - measured| / measured. This script puts another board's *measurements* in
the simulator's place: for boards A and B it takes the rows both ran (same precision, pass and
shape), normalises each series over those rows alone, and reports B's measurements as a
prediction of A's shape next to the model's shape on the same rows. Two boards of one chip on one
software stack show how repeatable a table is; two chips of one architecture on one stack, how
much of a shape is the chip's; one chip on two stacks, how much the stack alone moves it.

Usage:
  ./build/trainsim validate --points /tmp/points.csv
  python3 scripts/sibling_shape.py /tmp/points.csv [--pairs A:B,...]

Without --pairs it prints the pairs in DEFAULT_PAIRS below.
"""

import argparse
import collections
import csv
import sys

KERNEL_TABLES = {
    "deepbench_gemm",
    "deepbench_conv",
    "deepbench_lstm",
    "deepbench_held_out_gpus",
    "h200_kernels",
}

# (board A, precision A, board B, precision B): B's measurements as a prediction of A's.
DEFAULT_PAIRS = [
    # One chip (GP102), one DeepBench run's software stack.
    ("gtx-1080-ti", "fp32", "titan-xp", "fp32"),
    ("titan-xp", "fp32", "gtx-1080-ti", "fp32"),
    # One chip (GM200), one stack.
    ("m40", "fp32", "titan-x-maxwell", "fp32"),
    ("titan-x-maxwell", "fp32", "m40", "fp32"),
    # One chip (GP102), two stacks: the TITAN X Pascal's CUDA 8 with cuDNN 5, the TITAN Xp's
    # CUDA 8.0.88 with cuDNN 6.0.21 (the sheets' cuda and cudnn columns).
    ("titan-x-pascal", "fp32", "titan-xp", "fp32"),
    ("titan-xp", "fp32", "titan-x-pascal", "fp32"),
    # One architecture (Pascal), two chips (GP100, GP102).
    ("p100-sxm2-16gb", "fp32", "gtx-1080-ti", "fp32"),
    ("gtx-1080-ti", "fp32", "p100-sxm2-16gb", "fp32"),
    # Neighbouring architectures.
    ("v100-sxm2-16gb", "fp32", "p100-sxm2-16gb", "fp32"),
    ("t4", "fp32", "v100-sxm2-16gb", "fp32"),
    ("t4", "fp16", "v100-sxm2-16gb", "fp16"),
    ("v100-sxm2-16gb", "fp16", "t4", "fp16"),
    # One board, two precisions on one stack (cuDNN 9): SIMT fp32 against TF32 tensor cores.
    ("h200", "tf32", "h200", "fp32"),
    ("h200", "fp32", "h200", "tf32"),
]


def load(path):
    """Each (board, precision, kind, shape)'s rows in file order: DeepBench lists some layers
    twice (one per network that has them), and each listing is a row of its own."""
    rows = collections.defaultdict(list)
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["table"] not in KERNEL_TABLES or r["half"] == "excluded":
                continue
            board, dtype, rest = r["label"].split(" ", 2)
            kind = r["series"].split(" ", 2)[2]  # "conv bwd_inputs", "gemm", ...
            rows[(board, dtype, kind, rest)].append(
                (float(r["measured"]), float(r["simulated"])))
    return rows


def compare(rows, a, dta, b, dtb):
    series = collections.defaultdict(list)
    for (board, dtype, kind, rest), listings in rows.items():
        if board != a or dtype != dta:
            continue
        # The i-th listing of a shape on one board pairs with the i-th on the other: both boards'
        # sheets list DeepBench's layers in one order.
        others = rows.get((b, dtb, kind, rest), [])
        for (measured, simulated), other in zip(listings, others):
            series[kind].append((measured, other[0], simulated))
    sibling = model = 0.0
    n = 0
    for points in series.values():
        if len(points) < 2:
            continue
        mean_m = sum(p[0] for p in points) / len(points)
        mean_o = sum(p[1] for p in points) / len(points)
        mean_s = sum(p[2] for p in points) / len(points)
        for measured, other, simulated in points:
            m = measured / mean_m
            sibling += abs(other / mean_o - m) / m
            model += abs(simulated / mean_s - m) / m
            n += 1
    if n == 0:
        return None
    return 100 * sibling / n, 100 * model / n, n


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("points", help="the CSV `trainsim validate --points` writes")
    ap.add_argument("--pairs", help="A:B or A/dtype:B/dtype pairs, comma-separated")
    args = ap.parse_args()
    pairs = DEFAULT_PAIRS
    if args.pairs:
        pairs = []
        for pair in args.pairs.split(","):
            try:
                lhs, rhs = pair.split(":")
                a, dta = (lhs.split("/") + ["fp32"])[:2]
                b, dtb = (rhs.split("/") + [dta])[:2]
            except ValueError:
                sys.exit(f"sibling_shape.py: --pairs: '{pair}' is not A:B or A/dtype:B/dtype")
            pairs.append((a, dta, b, dtb))
    rows = load(args.points)
    print(f"{'board A':<22}{'predicted by':<24}{'rows':>6}{'sibling shape':>15}{'model shape':>13}")
    for a, dta, b, dtb in pairs:
        result = compare(rows, a, dta, b, dtb)
        if result is None:
            print(f"{a + ' ' + dta:<22}{b + ' ' + dtb:<24}{'no common rows':>34}")
            continue
        sibling, model, n = result
        print(f"{a + ' ' + dta:<22}{b + ' ' + dtb:<24}{n:>6}{sibling:>14.1f}%{model:>12.1f}%")


if __name__ == "__main__":
    main()
