#!/usr/bin/python3
"""Reference outputs from python3-xgboost, for vigil's model tests.

Trains a random XGBoost model on random data (missing values included) and writes, into OUT_DIR:
  model.json     the model, as Booster.save_model writes it
  rows.csv       the rows to score: a header of feature names, one row per line, empty = missing
  margins.csv    Booster.predict(output_margin=True), one line per row (all groups, comma separated)
  probs.csv      Booster.predict(), same layout
  contribs.csv   Booster.predict(pred_contribs=True): per row, features then bias (per group)

Usage: xgboost_oracle.py OUT_DIR --seed S --depth D --trees T [--objective O] [--classes K]
Run with /usr/bin/python3 (Debian's python3-xgboost).
"""
import argparse
import os

import numpy as np
import xgboost as xgb


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--trees", type=int, default=10)
    ap.add_argument("--objective", default="binary:logistic")
    ap.add_argument("--classes", type=int, default=3)
    ap.add_argument("--features", type=int, default=8)
    ap.add_argument("--rows", type=int, default=400)
    ap.add_argument("--missing", type=float, default=0.1)
    ap.add_argument("--train-rows", type=int, default=2000)
    args = ap.parse_args()

    rng = np.random.default_rng(args.seed)
    n_train = args.train_rows
    X = rng.normal(size=(n_train + args.rows, args.features)).astype(np.float64)
    # Some integer-valued and some wide-range columns, so thresholds sit on exact values too.
    X[:, 0] = np.round(X[:, 0] * 3)
    X[:, 1] = X[:, 1] * 1e4
    X[rng.random(X.shape) < args.missing] = np.nan
    signal = np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 2]) - 1e-4 * np.nan_to_num(X[:, 1])
    if args.objective.startswith("multi:"):
        y = np.digitize(signal + rng.normal(scale=0.5, size=len(signal)),
                        np.quantile(signal, np.linspace(0, 1, args.classes + 1)[1:-1]))
    elif args.objective.startswith("reg:squared"):
        y = signal + rng.normal(scale=0.3, size=len(signal)) + 7.0
    else:
        y = (signal + rng.normal(scale=0.7, size=len(signal)) > 0.3).astype(int)
    names = [f"x{i}" for i in range(args.features)]
    train = xgb.DMatrix(X[:n_train], label=y[:n_train], feature_names=names, missing=np.nan)
    params = {
        "objective": args.objective,
        "max_depth": args.depth,
        "eta": 0.3,
        "seed": args.seed,
        "tree_method": ["exact", "hist", "approx"][args.seed % 3],
        "min_child_weight": 0.5,
    }
    if args.objective.startswith("multi:"):
        params["num_class"] = args.classes
    bst = xgb.train(params, train, args.trees)
    os.makedirs(args.out_dir, exist_ok=True)
    bst.save_model(os.path.join(args.out_dir, "model.json"))

    rows = X[n_train:]
    test = xgb.DMatrix(rows, feature_names=names, missing=np.nan)
    with open(os.path.join(args.out_dir, "rows.csv"), "w") as f:
        f.write(",".join(names) + "\n")
        for r in rows:
            f.write(",".join("" if np.isnan(v) else repr(float(v)) for v in r) + "\n")

    def write(name, a):
        a = np.asarray(a).reshape(len(rows), -1)
        with open(os.path.join(args.out_dir, name), "w") as f:
            for r in a:
                f.write(",".join(repr(float(v)) for v in r) + "\n")

    write("margins.csv", bst.predict(test, output_margin=True))
    write("probs.csv", bst.predict(test))
    write("contribs.csv", bst.predict(test, pred_contribs=True))


if __name__ == "__main__":
    main()
