#!/usr/bin/env python3
"""Account-level recall and false-positive rate of `vigil replay --decisions-out` against an
AMLSim run's account labels (nodes.csv `isFraud`).

An account is flagged when it is the originator or the beneficiary of at least one alert
(a REVIEW or BLOCK decision), or when the policy's account step raised an account alert on it
(the originator_alert / beneficiary_alert columns). Over the accounts that appear in the
decisions:
  recall = flagged fraud accounts / fraud accounts
  false-positive rate = flagged normal accounts / normal accounts

Usage: tools/account_metrics.py DECISIONS.csv NODES.csv[.gz] [NAME]
"""
import csv
import gzip
import sys


def main(argv):
    if len(argv) not in (3, 4):
        sys.exit(__doc__)
    fraud = set()
    nodes = argv[2]
    opener = (lambda p: gzip.open(p, "rt", newline="")) if nodes.endswith(".gz") else (
        lambda p: open(p, newline=""))
    with opener(nodes) as f:
        for row in csv.DictReader(f):
            if row["isFraud"] == "1":
                fraud.add("A" + row["nodeid"])
    seen, flagged = set(), set()
    with open(argv[1], newline="") as f:
        for row in csv.DictReader(f):
            accounts = (row["originator"], row["beneficiary"])
            seen.update(accounts)
            if row["action"] in ("REVIEW", "BLOCK"):
                flagged.update(accounts)
            if row.get("originator_alert"):
                flagged.add(row["originator"])
            if row.get("beneficiary_alert"):
                flagged.add(row["beneficiary"])
    positives = fraud & seen
    negatives = seen - fraud
    tp = len(flagged & positives)
    fp = len(flagged & negatives)
    name = argv[3] if len(argv) == 4 else argv[1]
    recall = tp / len(positives) if positives else 0.0
    fpr = fp / len(negatives) if negatives else 0.0
    print(f"{name}: {len(seen)} accounts ({len(positives)} fraud); flagged {tp} fraud, {fp} normal: "
          f"account recall {recall:.3f}, false-positive rate {fpr:.4f}")


if __name__ == "__main__":
    main(sys.argv)
