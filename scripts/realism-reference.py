#!/usr/bin/python3
# Reference values for the realism analysis (issue 53), computed with statsmodels (Debian python3-statsmodels, for
# /usr/bin/python3) on data made here for the tests, so the tests compare simarena's estimators with an independent
# implementation of the same statistics, never with themselves.
#
# Run: /usr/bin/python3 scripts/realism-reference.py test/fixtures/realism
# Writes:
# - realism-batch.json: a realism batch's answers (which-is-real and naturalness, one row per rater and pair) and what
#   statsmodels gives on them: per synthetic condition the detection accuracy with a two-way (rater, scenario)
#   cluster-robust interval (Cameron, Gelbach and Miller 2011; statsmodels' cov_cluster_2groups) and the two one-sided
#   tests of equivalence to chance (Schuirmann 1987); pairwise differences of error rates with Holm's correction; the
#   logistic model with rater and scenario fixed effects; confidence calibration; and the 2x2 logistic regressions.
# - tost-power.json: power of the equivalence test of a proportion (statsmodels' power_ztost_prop, normal
#   distribution, not discretised, variance at the true proportion) on a grid.
import json
import os
import sys
import warnings

import numpy as np
import scipy
import statsmodels
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import power_ztost_prop

SCRIPT = 'scripts/realism-reference.py'
SOURCE = f'Python {sys.version.split()[0]}, statsmodels {statsmodels.__version__}, scipy {scipy.__version__}, numpy {np.__version__}. Made by {SCRIPT}'
Z975 = stats.norm.ppf(0.975)
Z95 = stats.norm.ppf(0.95)

REAL = 'HUMANS:human'
# The batch's comparisons in order: the real condition on side a of the first two, on side b of the third.
COMPARISONS = [[REAL, 'SCRIPT:gpt-test'], [REAL, 'AGENTS:gpt-test'], ['HUMAN_SCRIPT:human', REAL]]
SYNTHETIC = [c[1] if c[0] == REAL else c[0] for c in COMPARISONS]
# Logit of detection accuracy and of "the synthetic one is more natural" by condition (the truth the data is drawn from).
DETECTION = {'SCRIPT:gpt-test': 0.9, 'AGENTS:gpt-test': 0.25, 'HUMAN_SCRIPT:human': 0.05}
NATURAL = {'SCRIPT:gpt-test': 0.5, 'AGENTS:gpt-test': -0.7, 'HUMAN_SCRIPT:human': 0.15}
MARGIN = 0.15
SCENARIOS = 24
RATERS = 36
K = 6


def make_rows(rng):
    """One row per (pair, rater): each pair gets K distinct raters, the raters with the fewest answers first."""
    rater_skill = rng.normal(0, 0.6, RATERS)
    rater_taste = rng.normal(0, 0.4, RATERS)
    scenario_ease = rng.normal(0, 0.5, SCENARIOS)
    scenario_taste = rng.normal(0, 0.4, SCENARIOS)
    load = np.zeros(RATERS)
    rows = []
    for s in range(SCENARIOS):
        for c, comparison in enumerate(COMPARISONS):
            synthetic = SYNTHETIC[c]
            order = np.lexsort((rng.random(RATERS), load))
            for r in order[:K]:
                load[r] += 1
                correct = int(rng.random() < 1 / (1 + np.exp(-(DETECTION[synthetic] + rater_skill[r] + scenario_ease[s]))))
                natural = int(rng.random() < 1 / (1 + np.exp(-(NATURAL[synthetic] + rater_taste[r] + scenario_taste[s]))))
                # Confidence 1-5, higher when right; one answer in eight gives none (0).
                confidence = int(np.clip(np.round(2.6 + 1.1 * correct + rng.normal(0, 1.0)), 1, 5))
                if rng.random() < 0.125:
                    confidence = 0
                rows.append({
                    'scenario': f'scenario-{s + 1:02d}', 'rater': f'rater-{int(r) + 1:02d}', 'comparison': c,
                    'synthetic': synthetic, 'left': 'a' if rng.random() < 0.5 else 'b',
                    'correct': correct, 'confidence': confidence, 'natural_synthetic': natural,
                })
    return rows


def codes(values):
    return np.unique(np.asarray(values), return_inverse=True)[1]


def two_way(fit_model, groups):
    quiet = {'disp': 0} if isinstance(fit_model, sm.Logit) else {}
    return fit_model.fit(cov_type='cluster', cov_kwds={'groups': groups}, use_t=False, **quiet)


def detection(rows):
    out = {}
    for synthetic in SYNTHETIC:
        sub = [r for r in rows if r['synthetic'] == synthetic]
        y = np.array([r['correct'] for r in sub], dtype=float)
        groups = np.column_stack([codes([r['rater'] for r in sub]), codes([r['scenario'] for r in sub])])
        res = two_way(sm.OLS(y, np.ones((len(y), 1))), groups)
        est, se = float(res.params[0]), float(res.bse[0])
        low, upp = 0.5 - MARGIN, 0.5 + MARGIN
        p_low = float(stats.norm.sf((est - low) / se))
        p_upp = float(stats.norm.cdf((est - upp) / se))
        out[synthetic] = {
            'n': len(y), 'accuracy': est, 'se': se, 'ci95': [est - Z975 * se, est + Z975 * se],
            'error_rate': 1 - est, 'tost': {'p_lower': p_low, 'p_upper': p_upp, 'p': max(p_low, p_upp),
                                            'ci90': [est - Z95 * se, est + Z95 * se], 'equivalent': max(p_low, p_upp) < 0.05},
        }
    return out


def pairwise_lpm(rows):
    """Differences of error rates from one linear probability model with a dummy per condition, two-way clustered."""
    X = np.column_stack([[1.0 if r['synthetic'] == s else 0.0 for r in rows] for s in SYNTHETIC])
    y = np.array([1 - r['correct'] for r in rows], dtype=float)
    groups = np.column_stack([codes([r['rater'] for r in rows]), codes([r['scenario'] for r in rows])])
    res = two_way(sm.OLS(y, X), groups)
    pairs = []
    for i in range(len(SYNTHETIC)):
        for j in range(i + 1, len(SYNTHETIC)):
            contrast = np.zeros(len(SYNTHETIC))
            contrast[i], contrast[j] = 1, -1
            t = res.t_test(contrast)
            pairs.append({'a': SYNTHETIC[i], 'b': SYNTHETIC[j], 'difference': float(t.effect[0]), 'se': float(t.sd[0][0]), 'p': float(t.pvalue)})
    holm = multipletests([p['p'] for p in pairs], method='holm')[1]
    for p, h in zip(pairs, holm):
        p['p_holm'] = float(h)
    return pairs


def drop_perfect(rows):
    """Leaves out raters and scenarios all of whose answers are the same, again until none is: their fixed effect is
    infinite and they say nothing about the conditions (the same rule as simarena's)."""
    while True:
        changed = False
        for key in ('rater', 'scenario'):
            seen = {}
            for r in rows:
                seen.setdefault(r[key], set()).add(r['correct'])
            keep = [r for r in rows if len(seen[r[key]]) > 1]
            if len(keep) != len(rows):
                rows, changed = keep, True
        if not changed:
            return rows


def fixed_effects_logit(rows):
    kept = drop_perfect(rows)
    raters = sorted({r['rater'] for r in kept})
    scenarios = sorted({r['scenario'] for r in kept})
    columns = [[1.0 if r['synthetic'] == s else 0.0 for r in kept] for s in SYNTHETIC]
    columns += [[1.0 if r['rater'] == name else 0.0 for r in kept] for name in raters[1:]]
    columns += [[1.0 if r['scenario'] == name else 0.0 for r in kept] for name in scenarios[1:]]
    X = np.column_stack(columns)
    y = np.array([1 - r['correct'] for r in kept], dtype=float)
    res = sm.Logit(y, X).fit(disp=0, method='newton', tol=1e-12, maxiter=200)
    cov = res.cov_params()
    pairs = []
    for i in range(len(SYNTHETIC)):
        for j in range(i + 1, len(SYNTHETIC)):
            d = float(res.params[i] - res.params[j])
            se = float(np.sqrt(cov[i, i] + cov[j, j] - 2 * cov[i, j]))
            pairs.append({'a': SYNTHETIC[i], 'b': SYNTHETIC[j], 'log_odds_ratio': d, 'se': se, 'p': float(2 * stats.norm.sf(abs(d / se)))})
    holm = multipletests([p['p'] for p in pairs], method='holm')[1]
    for p, h in zip(pairs, holm):
        p['p_holm'] = float(h)
    return {'rows': len(kept), 'raters': len(raters), 'scenarios': len(scenarios), 'parameters': X.shape[1],
            'dropped_rows': len(rows) - len(kept), 'pairwise': pairs}


def calibration(rows):
    sub = [r for r in rows if r['confidence'] > 0]
    y = np.array([r['correct'] for r in sub], dtype=float)
    X = np.column_stack([np.ones(len(sub)), [float(r['confidence']) for r in sub]])
    groups = np.column_stack([codes([r['rater'] for r in sub]), codes([r['scenario'] for r in sub])])
    res = two_way(sm.Logit(y, X), groups)
    levels = []
    for level in range(1, 6):
        at = [r['correct'] for r in sub if r['confidence'] == level]
        levels.append({'confidence': level, 'n': len(at), 'correct': int(sum(at))})
    return {'n': len(sub), 'slope': float(res.params[1]), 'slope_se': float(res.bse[1]), 'levels': levels}


def two_by_two(rows, outcome):
    """Logit of "the synthetic one chosen" on writer (model = 1), knowledge (omniscient = 1) and their product, no
    intercept: the HUMANS cell, compared with itself, is 0.5 by construction."""
    writer = {'SCRIPT:gpt-test': 1, 'AGENTS:gpt-test': 1, 'HUMAN_SCRIPT:human': 0}
    knowledge = {'SCRIPT:gpt-test': 1, 'AGENTS:gpt-test': 0, 'HUMAN_SCRIPT:human': 1}
    w = np.array([writer[r['synthetic']] for r in rows], dtype=float)
    k = np.array([knowledge[r['synthetic']] for r in rows], dtype=float)
    X = np.column_stack([w, k, w * k])
    y = np.array([outcome(r) for r in rows], dtype=float)
    groups = np.column_stack([codes([r['rater'] for r in rows]), codes([r['scenario'] for r in rows])])
    res = two_way(sm.Logit(y, X), groups)
    effects = {}
    for name, contrast in (('writer', [1, 0, 0.5]), ('knowledge', [0, 1, 0.5]), ('interaction', [0, 0, 1])):
        t = res.t_test(np.array(contrast, dtype=float))
        est, se = float(t.effect[0]), float(t.sd[0][0])
        effects[name] = {'estimate': est, 'se': se, 'ci95': [est - Z975 * se, est + Z975 * se], 'p': float(t.pvalue)}
    return {'coefficients': [float(b) for b in res.params], 'covariance': [[float(v) for v in row] for row in res.cov_params()], 'effects': effects}


def tost_power():
    # Where the two critical values cross, statsmodels warns and gives a negative number: no sample of that size can
    # show equivalence, so the power is 0.
    warnings.simplefilter('ignore')
    grid = []
    for n in (100, 400, 856, 857, 1500):
        for p_alt in (0.5, 0.52, 0.55):
            for margin in (0.05, 0.1):
                power = power_ztost_prop(0.5 - margin, 0.5 + margin, n, p_alt, alpha=0.05, dist='norm', variance_prop=p_alt, discrete=False)[0]
                grid.append({'n': n, 'p_alt': p_alt, 'margin': margin, 'alpha': 0.05, 'power': float(max(power, 0.0))})
    return grid


def write(directory, name, value):
    with open(os.path.join(directory, name), 'w') as f:
        json.dump(value, f, indent=1)
        f.write('\n')


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else 'test/fixtures/realism'
    rows = make_rows(np.random.default_rng(53))
    write(directory, 'realism-batch.json', {
        'source': SOURCE,
        'design': {'real': REAL, 'comparisons': COMPARISONS, 'margin': MARGIN, 'alpha': 0.05, 'judgments_per_pair': K},
        'rows': rows,
        'detection': detection(rows),
        'pairwise': pairwise_lpm(rows),
        'fixed_effects_logit': fixed_effects_logit(rows),
        'calibration': calibration(rows),
        'two_by_two': {
            'natural': two_by_two(rows, lambda r: r['natural_synthetic']),
            'detection_error': two_by_two(rows, lambda r: 1 - r['correct']),
        },
    })
    write(directory, 'tost-power.json', {'source': f'{SOURCE}: power_ztost_prop(0.5 - margin, 0.5 + margin, n, p_alt, alpha, dist="norm", variance_prop=p_alt, discrete=False)', 'grid': tost_power()})


if __name__ == '__main__':
    main()
