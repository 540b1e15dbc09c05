#!/usr/bin/env python3
"""The table of scripts/detection-figures: reads what it wrote in OUT_DIR and prints protocols
(a) same stream, (b) cross stream and (c) zero shot, with the issue's targets beside them.

Usage: tools/detection_report.py OUT_DIR RUN...   (standard library only)
"""
import csv
import json
import os
import sys


def fmt(x, digits=3):
    return "-" if x is None else f"{x:.{digits}f}"


def interval(i):
    return f"{fmt(i.get('estimate'))} [{fmt(i.get('low'))}, {fmt(i.get('high'))}]"


def above_100(bands):
    """The bands of $100 and more; one figure when only one of them has rows (AMLSim's payments
    all lie below $1,000)."""
    high = [b for b in bands if not (b.get("band") or b.get("name", "")).startswith("< ")
            and not (b.get("band") or b.get("name", "")).startswith("[0")]
    high = [b for b in high if b["rows"] > 0]
    return high[0] if len(high) == 1 else None


def zero_shot(decisions):
    """Account recall and FPR of the policy's alerts (docs/detection.md (c)). An account is
    laundering when a labelled payment touches it. It is found by an account alert when the
    policy's account step raised one on it (originator_alert / beneficiary_alert), and by a
    payment alert when a payment it sends or receives is REVIEW or BLOCK. Returns the accounts,
    the laundering ones, (recall, FPR) of account alerts, of payment alerts and of either, and
    the payment-level F1."""
    seen, laundering = set(), set()
    by_account, by_payment = set(), set()
    payments = {"tp": 0, "fp": 0, "fn": 0}
    with open(decisions, newline="") as f:
        for row in csv.DictReader(f):
            accounts = (row["originator"], row["beneficiary"])
            seen.update(accounts)
            alert = row["action"] in ("REVIEW", "BLOCK")
            label = row["label"] == "1"
            if label:
                laundering.update(accounts)
            if alert:
                by_payment.update(accounts)
            if row.get("originator_alert"):
                by_account.add(row["originator"])
            if row.get("beneficiary_alert"):
                by_account.add(row["beneficiary"])
            if alert and label:
                payments["tp"] += 1
            elif alert:
                payments["fp"] += 1
            elif label:
                payments["fn"] += 1
    normal = seen - laundering

    def rates(alerted):
        recall = len(alerted & laundering) / len(laundering) if laundering else 0.0
        fpr = len(alerted & normal) / len(normal) if normal else 0.0
        return recall, fpr

    p = payments
    f1 = 2 * p["tp"] / (2 * p["tp"] + p["fp"] + p["fn"]) if p["tp"] else 0.0
    return (len(seen), len(laundering), rates(by_account), rates(by_payment),
            rates(by_account | by_payment), f1)


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    out, runs = argv[1], argv[2:]
    print("(a) same stream, split by event time 60/20/20 (test period only)")
    print(f"  {'stream':<24} {'all: PR-AUC [95%]':<26} {'F1':>6}   {'>= $100: PR-AUC [95%]':<26} "
          f"{'recall':>6}  best one-feature baseline")
    trained = [m for run in runs for m in (run, f"{run}.scale_free")]
    trained += ["generator"] if os.path.isdir(os.path.join(out, "generator.model")) else []
    for run in trained:
        card_path = os.path.join(out, f"{run}.model", "model_card.json")
        if not os.path.exists(card_path):
            print(f"  {run:<24} (no model card)")
            continue
        card = json.load(open(card_path))
        test = card["metrics"]["test"]
        high = above_100(test.get("amount_bands", []))
        best = max(card["baselines"], key=lambda b: b["test_pr_auc"]["estimate"] or 0)
        print(f"  {run:<24} {interval(test['pr_auc']):<26} {fmt(test['at_review']['f1']):>6}   "
              f"{interval(high['pr_auc']) if high else '-':<26} "
              f"{fmt(high['at_review']['recall']) if high else '-':>6}  "
              f"{best['feature']} {fmt(best['test_pr_auc']['estimate'])}"
              f"{'' if card['gate']['passed'] else '  (gate: FAILED)'}")
    print("\n(b) cross stream (every labelled row of the other stream)")
    print(f"  {'trained -> evaluated':<32} {'all: PR-AUC [95%]':<26} {'F1':>6}   "
          f"{'>= $100: PR-AUC [95%]':<26} {'acct recall @ FPR<=1%':>22}")
    for name in sorted(os.listdir(out)):
        if not name.endswith(".json") or "_on_" not in name:
            continue
        e = json.load(open(os.path.join(out, name)))
        high = above_100(e.get("amount_bands", []))
        acct = e.get("accounts") or {}
        print(f"  {name[:-5]:<32} {interval(e['all']['pr_auc']):<26} {fmt(e['all']['f1']):>6}   "
              f"{interval(high['pr_auc']) if high else '-':<26} "
              f"{fmt(acct.get('recall_at_max_fpr')):>22}")
    print("  targets: >= $100 PR-AUC >= 0.40; all payments F1 >= 0.75; account recall >= 0.85 "
          "at FPR <= 1%; generator F1 >= 0.60")
    print("\n(c) zero shot: policies/default.yaml, no model")
    for run in runs + ["generator_43"]:
        path = os.path.join(out, f"{run}.zero.csv")
        if not os.path.exists(path):
            continue
        accounts, laundering, acc, pay, either, f1 = zero_shot(path)
        print(f"  {run:<22} {accounts} accounts ({laundering} laundering): account recall "
              f"{either[0]:.3f} at account FPR {either[1]:.4f} (account alerts {acc[0]:.3f} / "
              f"{acc[1]:.4f}, payment alerts {pay[0]:.3f} / {pay[1]:.4f}); payment F1 {f1:.3f}")
    print("  target: account recall >= 0.20 at account FPR <= 1%")


if __name__ == "__main__":
    main(sys.argv)
