# Reference values for test/analysis/clustered-majority.test.ts, computed with statsmodels (Debian python3-statsmodels).
# Run: /usr/bin/python3 scripts/clustered-majority-statsmodels.py > test/fixtures/clustered-majority-statsmodels.json
# Pair majorities judged by one rater each (K = 1), raters judging several pairs: the rater-clustered variance of the
# pair-majority win rate is then the one-way cluster-robust variance of a mean, which statsmodels gives as the
# cluster-robust standard error of an OLS fit on a constant (cov_type="cluster", its default small-sample correction
# G / (G - 1) * (N - 1) / (N - 1) = G / (G - 1)). Two data sets, written out with their standard errors.
import json

import numpy as np
import statsmodels.api as sm


def dataset(seed, pairs, raters, lean):
    rng = np.random.default_rng(seed)
    rater = rng.integers(0, raters, size=pairs)
    # Each rater leans towards a by their own amount: pairs of one rater are correlated.
    chance = np.clip(0.5 + lean * (rater / (raters - 1) - 0.5), 0.05, 0.95)
    y = (rng.random(pairs) < chance).astype(float)
    return rater, y


def se_clustered(rater, y):
    fit = sm.OLS(y, np.ones((len(y), 1))).fit(cov_type="cluster", cov_kwds={"groups": rater})
    return float(fit.params[0]), float(fit.bse[0])


cases = []
for seed, pairs, raters, lean in [(51, 40, 7, 0.8), (52, 120, 15, 0.6)]:
    rater, y = dataset(seed, pairs, raters, lean)
    p, se = se_clustered(rater, y)
    cases.append({"rater": [int(r) for r in rater], "a_won": [int(v) for v in y], "win_rate_a": p, "se": se})
print(json.dumps({"source": "statsmodels " + sm.__version__ + ", OLS on a constant, cov_type='cluster' by rater", "cases": cases}, indent=1))
