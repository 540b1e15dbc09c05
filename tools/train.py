#!/usr/bin/python3
"""Trains vigil's transaction model from `vigil replay --features-out` output.

  tools/train.py --train TRAIN.csv --test TEST.csv --out-dir DIR [--rounds N] [--depth D]

TRAIN.csv is split by event time: the earliest 80% trains, the latest 20% validates (early
stopping, thresholds). TEST.csv should come from another stream (another generator seed): the
quality printed for it is the honest figure, a split of one stream alone flatters a model.

Writes into DIR:
  model.json              the XGBoost model (binary:logistic), for vigil
  thresholds.json         suggested review/block thresholds on the probability (the policy decides)
  model_card.json         schema version, training-data SHA-256, sizes, parameters, metrics
  test_margins.csv        the model's margins on TEST.csv (XGBoost's own), to check vigil against
  reference_profile.json  per feature: quantile bin edges (deciles; numpy.histogram bins, the
                          last one closed) and counts, missing count, mean and standard deviation,
                          and a bounded sorted sample (evenly spaced order statistics), for the
                          drift monitor, and the dispersion per window length (how much the
                          stream's own windows vary, beyond sampling noise); "score" profiles
                          the model's probability on the validation rows the same way
Prints PR-AUC and illicit-class F1 at the review threshold, overall and per typology.
Run with /usr/bin/python3 (Debian's python3-xgboost, -sklearn, -pandas).
"""
import argparse
import datetime
import hashlib
import json
import os
import sys

import numpy as np
import pandas as pd
import xgboost as xgb
from sklearn.metrics import average_precision_score, f1_score, precision_recall_curve

SCHEMA_VERSION = "vigil.features.v3"
NON_FEATURES = ("tx_id", "timestamp", "originator", "beneficiary", "label", "typology")
SAMPLE_SIZE = 2000
BINS = 10


def load(path):
    # Empty cells are missing values (NaN); typology is empty for normal traffic.
    df = pd.read_csv(path, dtype={"tx_id": str, "timestamp": str, "originator": str,
                                  "beneficiary": str, "typology": str}, low_memory=False)
    df["typology"] = df["typology"].fillna("")
    return df


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def thresholds_from(y, p):
    precision, recall, thr = precision_recall_curve(y, p)
    f1 = 2 * precision * recall / np.maximum(precision + recall, 1e-12)
    best = int(np.argmax(f1[:-1])) if len(thr) else 0
    review = float(thr[best]) if len(thr) else 0.5
    # Block: the lowest threshold whose precision reaches 0.9 (else the review threshold).
    ok = np.where(precision[:-1] >= 0.9)[0]
    block = float(thr[ok[0]]) if len(ok) else review
    return review, max(block, review), float(f1[best]) if len(thr) else 0.0


def report(name, df, p, review):
    y = df["label"].to_numpy()
    pred = (p >= review).astype(int)
    out = {
        "rows": int(len(y)),
        "positives": int(y.sum()),
        "pr_auc": float(average_precision_score(y, p)) if y.sum() else float("nan"),
        "f1_at_review": float(f1_score(y, pred, zero_division=0)),
        "precision_at_review": float((pred & y).sum() / max(pred.sum(), 1)),
        "recall_at_review": float((pred & y).sum() / max(y.sum(), 1)),
        "by_typology": {},
    }
    print(f"{name}: {out['rows']} rows, {out['positives']} laundering; PR-AUC {out['pr_auc']:.3f}; "
          f"at the review threshold: F1 {out['f1_at_review']:.3f}, precision "
          f"{out['precision_at_review']:.3f}, recall {out['recall_at_review']:.3f}")
    typ = df["typology"].to_numpy()
    for t in sorted(set(typ[y == 1])):
        if not t:
            continue
        mask = (typ == t) & (y == 1)
        recall = float(pred[mask].mean())
        out["by_typology"][t] = {"laundering_rows": int(mask.sum()), "recall_at_review": recall}
        print(f"  {t:<15} {int(mask.sum()):>6} rows  recall {recall:.3f}")
    return out


# Window lengths (seconds) at which the training stream's own variation between windows is
# measured (the "dispersion" of a profile entry).
DISPERSION_WINDOWS = (60, 300, 900, 3600, 21600, 86400)
MIN_DISPERSION_WINDOWS = 20


def dispersion(v, seconds, edges, counts):
    """How much more a window's histogram varies over the training stream than an iid sample's.

    For each window length, the rows are cut into consecutive windows of that many seconds of
    event time; each window's Pearson statistic X against the whole period's cells (missing and
    the quantile bins) is divided by its iid expectation k - 1. The dispersion is the 95th
    percentile of X / (k - 1) over the windows divided by chi-square's own 95th percentile of
    that ratio, at least 1: a window of n rows then varies like an iid sample of n / dispersion
    rows, in the upper tail where alarms are set. Windows with fewer than 5 rows are skipped, and
    a length with fewer than 20 windows is left out.
    """
    from scipy.stats import chi2
    missing = np.isnan(v)
    cells = np.where(missing, 0, 1 + np.clip(np.searchsorted(edges, np.where(missing, 0, v), side="right") - 1,
                                             0, len(counts) - 1))
    ref = np.concatenate([[missing.sum()], counts]).astype(float)
    keep = ref > 0
    q = ref[keep] / ref[keep].sum()
    k = int(keep.sum())
    out = {}
    if k < 2:
        return out
    remap = -np.ones(len(ref), dtype=int)
    remap[keep] = np.arange(k)
    cells = remap[cells]
    for w in DISPERSION_WINDOWS:
        win = seconds // w
        _, idx = np.unique(win, return_inverse=True)
        table = np.zeros((idx.max() + 1, k))
        np.add.at(table, (idx, cells), 1)
        n = table.sum(1)
        table, n = table[n >= 5], n[n >= 5]
        if len(n) < MIN_DISPERSION_WINDOWS:
            continue
        expected = n[:, None] * q[None, :]
        ratio = ((table - expected) ** 2 / expected).sum(1) / (k - 1)
        iid = chi2.ppf(0.95, k - 1) / (k - 1)
        out[str(w)] = max(1.0, float(np.percentile(ratio, 95) / iid))
    return out


def profile_entry(v, seconds=None):
    """One feature's (or the score's) reference: counts, decile bins, mean, std, sorted sample,
    and with event times the dispersion per window length."""
    v = np.asarray(v, dtype=float)
    present = np.sort(v[~np.isnan(v)])
    entry = {"count": int(len(v)), "missing": int(np.isnan(v).sum())}
    if len(present):
        edges = np.unique(np.quantile(present, np.linspace(0, 1, BINS + 1)))
        if len(edges) > 1:
            counts, _ = np.histogram(present, bins=edges)
        else:  # a constant feature: one bin [v, v]
            edges, counts = np.array([edges[0], edges[0]]), np.array([len(present)])
        entry.update({
            "bin_edges": [float(e) for e in edges],
            "bin_counts": [int(c) for c in counts],
            "mean": float(present.mean()),
            "std": float(present.std()),
            # Evenly spaced order statistics: a sorted sample for exact two-sample tests.
            "sample": [float(x) for x in present[np.linspace(0, len(present) - 1,
                                                             min(SAMPLE_SIZE, len(present))).astype(int)]],
        })
        if seconds is not None and len(edges) > 1:
            entry["dispersion"] = dispersion(v, seconds, edges, counts)
    return entry


def event_seconds(df):
    return pd.to_datetime(df["timestamp"], utc=True).astype("int64").to_numpy() // 10**9


def profile(df, features):
    seconds = event_seconds(df)
    return {f: profile_entry(df[f].to_numpy(dtype=float), seconds) for f in features}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train", required=True)
    ap.add_argument("--test", required=True)
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--eta", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=0, help="0 = all cores")
    args = ap.parse_args()

    train_all = load(args.train).sort_values("timestamp", kind="stable")
    test = load(args.test)
    features = [c for c in train_all.columns if c not in NON_FEATURES]
    missing = [f for f in features if f not in test.columns]
    if missing:
        sys.exit(f"train.py: {args.test} lacks features {missing}")
    cut = int(len(train_all) * 0.8)
    train, valid = train_all.iloc[:cut], train_all.iloc[cut:]
    if train["label"].sum() == 0 or valid["label"].sum() == 0:
        sys.exit("train.py: no laundering rows in the training or validation part; generate more data")

    def matrix(df):
        return xgb.DMatrix(df[features].to_numpy(dtype=np.float32), label=df["label"].to_numpy(),
                           feature_names=features, missing=np.nan)

    dtrain, dvalid = matrix(train), matrix(valid)
    pos = float(train["label"].sum())
    params = {
        "objective": "binary:logistic",
        "eval_metric": "aucpr",
        "max_depth": args.depth,
        "eta": args.eta,
        "subsample": 0.8,
        "colsample_bytree": 0.8,
        "min_child_weight": 1,
        "scale_pos_weight": (len(train) - pos) / pos,
        "tree_method": "hist",
        "seed": args.seed,
        "nthread": args.threads,
    }
    booster = xgb.train(params, dtrain, args.rounds, evals=[(dvalid, "valid")],
                        early_stopping_rounds=40, verbose_eval=False)
    # Keep exactly the trees up to the best iteration, so the saved model is the one evaluated.
    booster = booster[: booster.best_iteration + 1]
    p_valid = booster.predict(dvalid)
    review, block, _ = thresholds_from(valid["label"].to_numpy(), p_valid)
    print(f"model: {booster.num_boosted_rounds()} trees of depth <= {args.depth}, "
          f"{len(features)} features; trained on {len(train)} rows ({int(pos)} laundering)")
    print(f"thresholds (suggested; the policy decides): review >= {review:.4f}, block >= {block:.4f}")
    m_valid = report("validation (latest 20% of the training stream)", valid, p_valid, review)
    dtest = matrix(test)
    p_test = booster.predict(dtest)
    m_test = report("test (another stream)", test, p_test, review)

    os.makedirs(args.out_dir, exist_ok=True)
    booster.save_model(os.path.join(args.out_dir, "model.json"))
    with open(os.path.join(args.out_dir, "test_margins.csv"), "w") as f:
        # repr of the float32 widened to double: exact, so a comparison can ask for equality.
        f.writelines(repr(float(v)) + "\n" for v in booster.predict(dtest, output_margin=True))
    with open(os.path.join(args.out_dir, "thresholds.json"), "w") as f:
        json.dump({"review": review, "block": block,
                   "chosen_by": "review: best F1 on validation; block: lowest threshold with "
                                "precision >= 0.9 on validation"}, f, indent=2)
    card = {
        "model": "model.json",
        "created_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "feature_schema_version": SCHEMA_VERSION,
        "features": features,
        "training_data": {"path": os.path.basename(args.train), "sha256": sha256(args.train),
                          "rows": len(train_all), "train_rows": len(train), "valid_rows": len(valid)},
        "test_data": {"path": os.path.basename(args.test), "sha256": sha256(args.test)},
        "params": {k: v for k, v in params.items() if k != "nthread"},
        "trees": booster.num_boosted_rounds(),
        "xgboost_version": xgb.__version__,
        "thresholds": {"review": review, "block": block},
        "metrics": {"validation": m_valid, "test": m_test},
    }
    with open(os.path.join(args.out_dir, "model_card.json"), "w") as f:
        json.dump(card, f, indent=2)
    with open(os.path.join(args.out_dir, "reference_profile.json"), "w") as f:
        # The score's reference is the model's probability on the validation rows: data it did
        # not train on, as live traffic will be.
        json.dump({"feature_schema_version": SCHEMA_VERSION, "rows": len(train),
                   "features": profile(train, features),
                   "score": profile_entry(p_valid.astype(float), event_seconds(valid))}, f)
    print(f"wrote model.json, thresholds.json, model_card.json, reference_profile.json to {args.out_dir}")


if __name__ == "__main__":
    main()
