#!/usr/bin/env python3
"""Converts an IBM AMLSim sample run (transactions.csv + nodes.csv) to the AMLworld CSV layout
that `vigil replay` reads, so the run can be replayed and decided like any other stream.

AMLSim's layout: transactions.csv `sourceNodeId,targetNodeId,value,time` (time: a simulation
step) and nodes.csv `nodeid,isFraud,init_balance,fraudStep`. Mapping:
  - step s -> the day 2022-09-01 + (s - 1); the transactions of a step are spread evenly over
    that day in file order (AMLworld timestamps have minutes);
  - node n -> account "A<n>" at bank "001"; value -> US Dollar both sides, "Wire";
  - Is Laundering -> 1 when both accounts are fraud nodes (a transaction inside a pattern), else
    0. AMLSim labels accounts, not payments: this is a transaction-level proxy. The account-level
    figures (tools/account_metrics.py) use nodes.csv itself.

Usage: tools/amlsim_to_amlworld.py RUN_DIR OUT.csv   (RUN_DIR's files may be gzip-compressed: X.csv.gz)
"""
import csv
import datetime
import gzip
import os
import sys
from collections import Counter


def open_text(path):
    """path, or path.gz when only the compressed copy exists (testdata/amlsim)."""
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        return gzip.open(path + ".gz", "rt", newline="")
    return open(path, newline="")


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    run, out_path = argv[1], argv[2]
    fraud = set()
    with open_text(f"{run}/nodes.csv") as f:
        for row in csv.DictReader(f):
            if row["isFraud"] == "1":
                fraud.add(row["nodeid"])
    with open_text(f"{run}/transactions.csv") as f:
        rows = list(csv.DictReader(f))
    per_step = Counter(r["time"] for r in rows)
    seen = Counter()
    start = datetime.datetime(2022, 9, 1)
    with open(out_path, "w", newline="") as out:
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["Timestamp", "From Bank", "Account", "To Bank", "Account", "Amount Received",
                    "Receiving Currency", "Amount Paid", "Payment Currency", "Payment Format",
                    "Is Laundering"])
        for r in rows:
            step = int(r["time"])
            minute = seen[r["time"]] * 1440 // per_step[r["time"]]
            seen[r["time"]] += 1
            t = start + datetime.timedelta(days=step - 1, minutes=minute)
            amount = f"{float(r['value']):.2f}"
            src, dst = r["sourceNodeId"], r["targetNodeId"]
            label = 1 if src in fraud and dst in fraud else 0
            w.writerow([t.strftime("%Y/%m/%d %H:%M"), "001", f"A{src}", "001", f"A{dst}",
                        amount, "US Dollar", amount, "US Dollar", "Wire", label])
    print(f"{out_path}: {len(rows)} transactions, {len(fraud)} fraud accounts")


if __name__ == "__main__":
    main(sys.argv)
