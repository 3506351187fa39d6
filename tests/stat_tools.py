"""The statistical yardstick of the test suite.

``excess(counts, expected)`` asks whether K offspring draws have mean
``expected``. With d = (mean offspring - expected), the statistic
``Q = K * ||d||^2`` is a quadratic form in an (approximately, by the CLT)
Gaussian vector: if the mean is right, Q has mean tr(C) and standard
deviation sqrt(2 tr(C^2)), where C is the N x N covariance of one draw's
offspring counts, estimated from the K draws themselves. Using the full C
keeps this valid for methods whose particles' counts are correlated (the
warp-shared s-segments of C1/UC1, the fixed total of every method).

``excess`` returns (Q - tr C) / sqrt(2 tr C^2), a z-like score. The tests
require it below ``Z_MAX = 8``: Q is a weighted sum of chi-square(1) terms,
and even in the worst case of a single dominant term P(chi2_1 > 1 + 8 sqrt 2)
is below 5e-4; with many terms it is Gaussian-like and far smaller. A bias
b shows up as K ||b||^2 added to Q, so the test's power grows with K; each
suite also has a negative control (a biased target that must be rejected).
"""

import numpy as np

Z_MAX = 8.0


def excess(counts, expected) -> float:
    counts = np.asarray(counts, dtype=np.float64)
    k = counts.shape[0]
    d = counts.mean(axis=0) - np.asarray(expected, dtype=np.float64)
    q = k * float(d @ d)
    c = np.cov(counts, rowvar=False)
    mean = float(np.trace(c))
    sd = float(np.sqrt(2.0 * np.sum(c * c)))
    if sd == 0.0:  # deterministic method: the mean must be exact
        return 0.0 if q < 1e-18 else float("inf")
    return (q - mean) / sd
