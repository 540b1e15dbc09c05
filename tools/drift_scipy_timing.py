#!/usr/bin/python3
"""scipy's time for the drift benchmark's work (docs/benchmarks.md, "Drift statistics"):
ks_2samp + wasserstein_distance of a window against a 100,000-value reference, best of 3 x 20
calls. The same sizes as build/src/vigil/drift/two_sample_benchmark.

  /usr/bin/python3 tools/drift_scipy_timing.py
"""
import timeit

import numpy as np
from scipy.stats import ks_2samp, wasserstein_distance

rng = np.random.default_rng(1)
reference = rng.normal(0, 1, 100_000)
for m in (1000, 100):
    window = rng.normal(0.1, 1.1, m)
    best = min(timeit.repeat(lambda: (ks_2samp(reference, window),
                                      wasserstein_distance(reference, window)),
                             number=20, repeat=3)) / 20
    print(f"scipy 100,000 x {m}: {best * 1e3:.2f} ms")
