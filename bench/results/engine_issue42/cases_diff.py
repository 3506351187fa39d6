"""Compare the two pickles of cases_old_api.py and cases_run_filter.py bit for bit.

python cases_diff.py OLD.pkl NEW.pkl
"""

import pickle
import sys

import numpy as np

a, b = (pickle.load(open(p, "rb")) for p in sys.argv[1:3])
bad = 0
for k in a:
    for i, (x, y) in enumerate(zip(a[k], b[k], strict=True)):
        if x is None and y is None:
            continue
        xa, ya = np.asarray(x), np.asarray(y)
        if xa.shape != ya.shape or not np.array_equal(xa, ya, equal_nan=True):
            bad += 1
            print("DIFF", k, i)
print(len(a), "cases,", bad, "differ")
