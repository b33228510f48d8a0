"""Slow, obvious plain-NumPy reference of ShareBoost, for tests only.

Everything is written from the definitions of [SWS2011]
(eq. 3 and the ShareBoost algorithm), one sample at a time, without sharing
code with the package. The refit uses SciPy's BFGS from zero (the package uses
warm-started L-BFGS), so agreement tests the optimum, not the optimiser.
"""

import numpy as np
from scipy.optimize import minimize


def sample_loss(scores, label):
    """eq. (3): log sum_{y'} exp(1[y' != y] - s_y + s_{y'})."""
    terms = [(1.0 if j != label else 0.0) - scores[label] + scores[j]
             for j in range(len(scores))]
    top = max(terms)
    return top + np.log(sum(np.exp(t - top) for t in terms))


def sample_loss_gradient(scores, label):
    """d loss / d scores = softmax(1[j != y] + s_j) - e_y."""
    z = np.array([(1.0 if j != label else 0.0) + scores[j] for j in range(len(scores))])
    p = np.exp(z - z.max())
    p /= p.sum()
    p[label] -= 1.0
    return p


def objective(W, b, X, y, sample_weight, alpha):
    total = 0.0
    for i in range(X.shape[0]):
        total += sample_weight[i] * sample_loss(W @ X[i] + b, y[i])
    return total / sample_weight.sum() + alpha * np.sum(W * W)


def gradient(W, b, X, y, sample_weight, alpha):
    """Gradient of ``objective`` w.r.t. W (k x d) and b (k,)."""
    gW = np.zeros_like(W)
    gb = np.zeros_like(b)
    for i in range(X.shape[0]):
        r = sample_weight[i] * sample_loss_gradient(W @ X[i] + b, y[i])
        gW += np.outer(r, X[i])
        gb += r
    return gW / sample_weight.sum() + 2 * alpha * W, gb / sample_weight.sum()


def refit(X, y, sample_weight, n_classes, support, alpha, fit_intercept):
    """argmin over W supported on ``support`` (and b if fitted), from zero, by BFGS."""
    d = X.shape[1]
    k = n_classes
    s = len(support)

    def unpack(theta):
        W = np.zeros((k, d))
        W[:, support] = theta[: k * s].reshape(k, s)
        b = theta[k * s:] if fit_intercept else np.zeros(k)
        return W, b

    def fun(theta):
        W, b = unpack(theta)
        gW, gb = gradient(W, b, X, y, sample_weight, alpha)
        g = [gW[:, support].ravel()] + ([gb] if fit_intercept else [])
        return objective(W, b, X, y, sample_weight, alpha), np.concatenate(g)

    theta0 = np.zeros(k * s + (k if fit_intercept else 0))
    res = minimize(fun, theta0, jac=True, method="BFGS",
                   options={"gtol": 1e-10, "maxiter": 20000})
    return unpack(res.x), res.fun


def shareboost(X, y, n_classes, n_rounds, alpha=0.0, fit_intercept=True,
               sample_weight=None, groups=None):
    """Return (selected features in order, train objective after each round).

    With ``groups`` (a list of lists of column indices), each round selects
    the unselected group with the largest sum of its columns' gradient l1
    norms (§3.2) and returns group indices.
    """
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    if groups is None:
        groups = [[j] for j in range(d)]
    sample_weight = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
    W = np.zeros((n_classes, d))
    b = np.zeros(n_classes)
    if fit_intercept:
        (W, b), _ = refit(X, y, sample_weight, n_classes, [], alpha, True)
    selected, losses = [], []
    for _ in range(n_rounds):
        G, _ = gradient(W, b, X, y, sample_weight, alpha)
        best, best_score = None, -np.inf
        for g, columns in enumerate(groups):
            if g in selected:
                continue
            score = sum(np.sum(np.abs(G[:, j])) for j in columns)
            if score > best_score:  # strict: ties go to the lowest index
                best, best_score = g, score
        selected.append(best)
        support = [j for g in selected for j in groups[g]]
        (W, b), loss = refit(X, y, sample_weight, n_classes, support, alpha,
                             fit_intercept)
        losses.append(loss)
    return np.array(selected), np.array(losses)


def threshold_runs(codes, features, cuts):
    """The inputs of the stump kernels, built from the definitions (not by the store).

    ``codes`` (n_features, n), stump ``l`` = ``1[codes[features[l]] <= cuts[l]]``.
    Returns ``(slots, run_start, cols, order, ends)``: runs of equal feature
    sorted by cut, each sample's slot (run start + run index + cuts below its
    code), each run's samples sorted by code, and the samples each stump holds.
    """
    m, n = len(features), codes.shape[1]
    cols = np.lexsort((cuts, features)).astype(np.intp)  # stump l of the runs = column cols[l]
    f, c = np.asarray(features)[cols], np.asarray(cuts)[cols]
    starts = np.flatnonzero(np.r_[True, f[1:] != f[:-1]]) if m else np.zeros(0, np.intp)
    run_start = np.r_[starts, m].astype(np.intp)
    slots = np.empty((n, len(starts)), dtype=np.int32)
    order = np.empty((len(starts), n), dtype=np.int32)
    ends = np.empty(m, dtype=np.intp)
    for q, lo in enumerate(starts):
        hi, x = run_start[q + 1], codes[f[lo]]
        slots[:, q] = lo + q + np.searchsorted(c[lo:hi], x, side="left")
        order[q] = np.argsort(x, kind="stable")
        ends[lo:hi] = np.searchsorted(x[order[q]], c[lo:hi], side="right")
    return slots, run_start, cols, order, ends
