#!/usr/bin/env python3
"""Prints, per laundering typology, how the features of its payments differ from normal traffic.

Reads the CSV written by `vigil replay --features-out` (columns tx_id, timestamp, features...,
label, typology). Standard library only, so it runs wherever python3 does.

    python3 scripts/feature_signal.py build/demo/features.csv
"""
import csv
import statistics
import sys

COLUMNS = [
    # (header, feature, statistic)
    ("cycle>0", "cycle_length", "share_positive"),
    ("orig fan-out 7d", "orig_fan_out_7d", "median"),
    ("bene fan-in 7d", "bene_fan_in_7d", "median"),
    ("near-thr 24h", "orig_near_threshold_count_24h", "mean"),
    ("pass-thru 24h", "orig_pass_through_ratio_24h", "median"),
    ("amount z", "orig_amount_zscore", "median"),
]


def summarize(values, statistic):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    if statistic == "share_positive":
        return f"{100.0 * sum(1 for v in values if v > 0) / len(values):.1f}%"
    if statistic == "mean":
        return f"{statistics.fmean(values):.2f}"
    return f"{statistics.median(values):.2f}"


def main(path):
    groups = {}
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        for row in reader:
            group = row["typology"] or ("laundering (other)" if row["label"] == "1" else "normal")
            bucket = groups.setdefault(group, {c[1]: [] for c in COLUMNS})
            for _, feature, _ in COLUMNS:
                cell = row[feature]
                bucket[feature].append(float(cell) if cell != "" else None)
    header = f"{'typology':<18}{'rows':>9}" + "".join(f"{c[0]:>17}" for c in COLUMNS)
    print(header)
    for group in sorted(groups, key=lambda g: (g != "normal", g)):
        bucket = groups[group]
        n = len(next(iter(bucket.values())))
        cells = "".join(f"{summarize(bucket[c[1]], c[2]):>17}" for c in COLUMNS)
        print(f"{group:<18}{n:>9}{cells}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
