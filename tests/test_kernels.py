"""Gaussian Gram stacks and eigenvalue tail sums against brute-force references."""

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg

import mcsparse.kernels._gaussian as gaussian_module
from mcsparse.kernels import default_bandwidths, gaussian_kernel_stack, tail_sums

TAUS = [2.0 ** -3, 0.5, 1.0, 3.0, 2.0 ** 6]


def _brute_force_stack(X, Y, bandwidths):
    """``exp(-||x_i - y_j||^2 / (2 tau))`` by a double loop in float64."""
    X = np.asarray(X, dtype=np.float64)
    Y = X if Y is None else np.asarray(Y, dtype=np.float64)
    bandwidths = np.atleast_1d(np.asarray(bandwidths, dtype=np.float64))
    out = np.empty((bandwidths.size, X.shape[0], Y.shape[0]))
    for i in range(X.shape[0]):
        for j in range(Y.shape[0]):
            d = np.sum((X[i] - Y[j]) ** 2)
            out[:, i, j] = np.exp(-d / (2.0 * bandwidths))
    return out


def _brute_force_tail_sums(gram_stack, zetas):
    """``sum_{j > zeta} lambda_j`` from the full spectrum, summed directly."""
    eigenvalues = np.linalg.eigvalsh(np.asarray(gram_stack, dtype=np.float64))[:, ::-1]
    return np.array([[max(e[z:].sum(), 0.0) for e in eigenvalues] for z in zetas])


def _data(seed, n_samples, n_features=4, dtype=np.float64):
    return np.random.RandomState(seed).randn(n_samples, n_features).astype(dtype)


def _psd_stack(seed, n_kernels, n_samples, rank=None):
    """Random symmetric positive semi-definite matrices ``A A^T``."""
    rng = np.random.RandomState(seed)
    rank = n_samples if rank is None else rank
    A = rng.randn(n_kernels, n_samples, rank)
    stack = A @ A.transpose(0, 2, 1)
    return 0.5 * (stack + stack.transpose(0, 2, 1))


# --------------------------------------------------------------------------
# default_bandwidths


def test_default_bandwidths_is_the_paper_grid():
    taus = default_bandwidths()
    assert taus.dtype == np.float64 and taus.shape == (21,)
    np.testing.assert_array_equal(taus, [2.0 ** i for i in range(-10, 11)])
    assert (np.diff(taus) > 0).all()


# --------------------------------------------------------------------------
# gaussian_kernel_stack: values


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n_X", [1, 2, 7, 13, 31])
@pytest.mark.parametrize("n_Y", [None, 1, 5, 11])
def test_stack_matches_brute_force(dtype, n_X, n_Y):
    X = _data(0, n_X, dtype=dtype)
    Y = None if n_Y is None else _data(1, n_Y, dtype=dtype)
    got = gaussian_kernel_stack(X, Y, bandwidths=TAUS)
    want = _brute_force_stack(X, Y, TAUS)
    assert got.dtype == np.float64 and got.flags.c_contiguous
    assert got.shape == (len(TAUS), n_X, n_X if n_Y is None else n_Y)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("with_Y", [False, True])
def test_stack_does_not_depend_on_an_offset_of_the_data(with_Y):
    # ||x||^2 - 2 x.y + ||y||^2 loses all precision far from the origin
    # unless the data are centred first
    X, Y = _data(0, 13), (_data(1, 5) if with_Y else None)
    near = gaussian_kernel_stack(X, Y, bandwidths=TAUS)
    for offset in (1e6, 1e8):
        far = gaussian_kernel_stack(X + offset, None if Y is None else Y + offset,
                                    bandwidths=TAUS)
        np.testing.assert_allclose(far, near, rtol=1e-6, atol=1e-9)


def test_default_grid_matches_brute_force():
    X, Y = _data(2, 9), _data(3, 4)
    got = gaussian_kernel_stack(X, Y)
    assert got.shape == (21, 9, 4)
    np.testing.assert_allclose(got, _brute_force_stack(X, Y, default_bandwidths()),
                               rtol=1e-10, atol=1e-13)


def test_scalar_bandwidth_is_a_grid_of_one():
    X = _data(4, 5)
    got = gaussian_kernel_stack(X, bandwidths=2.0)
    assert got.shape == (1, 5, 5)
    np.testing.assert_array_equal(got, gaussian_kernel_stack(X, bandwidths=[2.0]))
    np.testing.assert_allclose(got, _brute_force_stack(X, None, 2.0), rtol=1e-12)


def test_integer_input_and_integer_bandwidths():
    X = np.array([[0, 1], [2, 3], [4, 4]])
    got = gaussian_kernel_stack(X, bandwidths=[1, 4])
    np.testing.assert_allclose(got, _brute_force_stack(X, None, [1, 4]), rtol=1e-12)


@pytest.mark.parametrize("n_samples", [1, 2, 17, 64])
def test_symmetric_with_exact_unit_diagonal(n_samples):
    X = _data(5, n_samples, n_features=3) * 10.0  # large norms: round-off in ||x||^2
    for working_memory in (None, 1e-6):
        K = gaussian_kernel_stack(X, bandwidths=default_bandwidths(),
                                  working_memory=working_memory)
        np.testing.assert_array_equal(K, K.transpose(0, 2, 1))
        np.testing.assert_array_equal(np.diagonal(K, axis1=1, axis2=2), 1.0)


@pytest.mark.parametrize("with_Y", [False, True])
@pytest.mark.parametrize("working_memory", [None, 1e-9, 0.004])
def test_float32_stack_is_the_float64_stack_rounded_once(with_Y, working_memory):
    """``dtype=np.float32``: exponentials in float64, each entry rounded once,
    in one chunk, in chunks of a few rows and of one row (the same chunks
    for both dtypes: an outlier makes the distances' round-off depend on
    them); still exactly symmetric."""
    X = _data(9, 41, n_features=4) * 3.0
    X[0] = 1e6
    Y = _data(10, 13, n_features=4) if with_Y else None
    wide = gaussian_kernel_stack(X, Y, bandwidths=TAUS, working_memory=working_memory)
    single = gaussian_kernel_stack(X, Y, bandwidths=TAUS, dtype=np.float32,
                                   working_memory=working_memory)
    assert single.dtype == np.float32 and single.flags.c_contiguous
    np.testing.assert_array_equal(single, wide.astype(np.float32))
    if not with_Y:
        np.testing.assert_array_equal(single, single.transpose(0, 2, 1))
        np.testing.assert_array_equal(np.diagonal(single, axis1=1, axis2=2), 1.0)


@pytest.mark.parametrize("dtype", [None, np.float16, np.int32, complex, "f4x", "", ">f8",
                                   "(-1,)f8", ("f8", -1), np.float64(1.0),
                                   np.zeros(2, np.float32)])
def test_stack_refuses_other_dtypes(dtype):
    """Only float32 and float64, as types, dtypes or names; not values that have one."""
    with pytest.raises(TypeError, match="dtype must be np.float32 or np.float64"):
        gaussian_kernel_stack(_data(0, 4), bandwidths=[1.0], dtype=dtype)


def test_duplicate_rows_stay_within_round_off_of_one():
    # ||x||^2 + ||y||^2 - 2 x.y leaves round-off off the diagonal, clipped at 0
    X = np.repeat(_data(6, 3) * 100.0, 2, axis=0)
    K = gaussian_kernel_stack(X, bandwidths=[1e-3, 1.0])
    np.testing.assert_allclose(K[:, [0, 2, 4], [1, 3, 5]], 1.0, rtol=1e-7)
    assert (K >= 0).all() and (K <= 1).all()


@pytest.mark.parametrize("with_Y", [False, True])
def test_tiny_working_memory_forces_chunks_with_identical_output(monkeypatch, with_Y):
    X = _data(7, 37, n_features=6)
    Y = _data(8, 23, n_features=6) if with_Y else None
    calls = []
    real = gaussian_module.euclidean_distances

    def counting(*args, **kwargs):
        calls.append(args[0].shape[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(gaussian_module, "euclidean_distances", counting)
    whole = gaussian_kernel_stack(X, Y, bandwidths=TAUS)
    assert calls == [37]
    calls.clear()
    # 3 float64 temporaries per entry: 5 rows of 37 or 23 columns per chunk
    row_bytes = 3 * 8 * (23 if with_Y else 37)
    chunked = gaussian_kernel_stack(X, Y, bandwidths=TAUS,
                                    working_memory=5 * row_bytes / 2**20)
    assert calls == [5] * 7 + [2]
    calls.clear()
    one_row = gaussian_kernel_stack(X, Y, bandwidths=TAUS, working_memory=1e-9)
    assert calls == [1] * 37
    # equal up to the round-off of differently blocked BLAS products
    np.testing.assert_allclose(chunked, whole, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(one_row, whole, rtol=1e-12, atol=1e-300)
    if not with_Y:
        for K in (chunked, one_row):
            np.testing.assert_array_equal(K, K.transpose(0, 2, 1))
            np.testing.assert_array_equal(np.diagonal(K, axis1=1, axis2=2), 1.0)
    np.testing.assert_allclose(whole, _brute_force_stack(X, Y, TAUS), rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_input_matches_dense(fmt):
    rng = np.random.RandomState(9)
    X = sp.random(15, 8, density=0.3, format=fmt, random_state=rng)
    Y = sp.random(6, 8, density=0.3, format=fmt, random_state=rng)
    Xd, Yd = X.toarray(), Y.toarray()
    for a, b, want in [(X, None, _brute_force_stack(Xd, None, TAUS)),
                       (X, Y, _brute_force_stack(Xd, Yd, TAUS)),
                       (Xd, Y, _brute_force_stack(Xd, Yd, TAUS)),
                       (X, Yd, _brute_force_stack(Xd, Yd, TAUS))]:
        got = gaussian_kernel_stack(a, b, bandwidths=TAUS, working_memory=1e-4)
        assert got.dtype == np.float64 and got.flags.c_contiguous
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-13)
    K = gaussian_kernel_stack(X, bandwidths=TAUS)
    np.testing.assert_array_equal(K, K.transpose(0, 2, 1))
    np.testing.assert_array_equal(np.diagonal(K, axis1=1, axis2=2), 1.0)


def test_extreme_bandwidths_underflow_silently():
    X = _data(10, 6) * 1e3
    K = gaussian_kernel_stack(X, bandwidths=[1e-300, 1e300])
    np.testing.assert_array_equal(K[0], np.eye(6))
    np.testing.assert_array_equal(K[1], 1.0)


# --------------------------------------------------------------------------
# gaussian_kernel_stack: bad inputs


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_stack_rejects_non_finite_samples(bad):
    X = _data(11, 4)
    X[2, 1] = bad
    with pytest.raises(ValueError, match="X"):
        gaussian_kernel_stack(X)
    with pytest.raises(ValueError, match="Y"):
        gaussian_kernel_stack(_data(12, 3), X)


@pytest.mark.parametrize("X", [np.arange(4.0), np.zeros((2, 2, 2)), 3.0])
def test_stack_rejects_non_2d_samples(X):
    with pytest.raises(ValueError, match="2D|dim 3"):
        gaussian_kernel_stack(X)
    with pytest.raises(ValueError, match="2D|dim 3"):
        gaussian_kernel_stack(np.zeros((3, 4)), X)


def test_stack_rejects_empty_samples():
    with pytest.raises(ValueError, match="0 sample"):
        gaussian_kernel_stack(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="0 sample"):
        gaussian_kernel_stack(np.zeros((2, 3)), np.zeros((0, 3)))
    with pytest.raises(ValueError, match="0 feature"):
        gaussian_kernel_stack(np.zeros((2, 0)))


def test_stack_rejects_non_numeric_samples():
    with pytest.raises(ValueError):
        gaussian_kernel_stack(np.array([["a", "b"], ["c", "d"]], dtype=object))
    with pytest.raises(ValueError, match="[Cc]omplex"):
        gaussian_kernel_stack(np.ones((2, 2)) * 1j)


def test_stack_rejects_feature_mismatch():
    with pytest.raises(ValueError, match="Y has 3 features, but X has 4 features"):
        gaussian_kernel_stack(np.zeros((2, 4)), np.zeros((5, 3)))


def test_stack_rejects_overflowing_distances():
    with pytest.raises(ValueError, match="norms of the rows of X overflow"):
        gaussian_kernel_stack(np.array([[1e200, 0.0], [-1e200, 0.0]]))
    with pytest.raises(ValueError, match="norms of the rows of Y overflow"):
        gaussian_kernel_stack(np.zeros((1, 2)), np.array([[1e200, 0.0]]))
    # finite norms whose distance overflows
    with pytest.raises(ValueError, match="squared distances overflow"):
        gaussian_kernel_stack(np.array([[1e154, 0.0], [-1e154, 0.0]]))


@pytest.mark.parametrize("bandwidths, match", [
    ([], "at least one"),
    ([[1.0, 2.0]], "1-D"),
    ([1.0, 0.0], r"bandwidths\[1\] = 0.0"),
    ([-1.0], "strictly positive"),
    ([1.0, np.nan], "finite"),
    ([np.inf], "finite"),
    (0, "strictly positive"),
])
def test_stack_rejects_bad_bandwidths(bandwidths, match):
    with pytest.raises(ValueError, match=match):
        gaussian_kernel_stack(np.zeros((2, 2)), bandwidths=bandwidths)


@pytest.mark.parametrize("bandwidths", [True, [True, False], ["a"], [1j], [None]])
def test_stack_rejects_non_real_bandwidths(bandwidths):
    with pytest.raises(TypeError, match="bandwidths"):
        gaussian_kernel_stack(np.zeros((2, 2)), bandwidths=bandwidths)


@pytest.mark.parametrize("working_memory, error", [
    (0, ValueError), (-1.0, ValueError), (np.nan, ValueError), (np.inf, ValueError),
    ("64", TypeError), (True, TypeError),
])
def test_stack_rejects_bad_working_memory(working_memory, error):
    with pytest.raises(error, match="working_memory"):
        gaussian_kernel_stack(np.zeros((2, 2)), working_memory=working_memory)


# --------------------------------------------------------------------------
# tail_sums: values


METHODS = ["auto", "eigh", "eigsh"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("n_samples", [2, 3, 8, 29])
def test_tail_sums_match_eigvalsh(method, n_samples):
    stack = _psd_stack(13, 3, n_samples)
    zetas = list(range(n_samples))
    want = _brute_force_tail_sums(stack, zetas)
    scale = np.abs(stack).max() * n_samples
    got = tail_sums(stack, zetas, method=method)
    assert got.dtype == np.float64 and got.shape == (n_samples, 3)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12 * scale)
    for z in zetas:
        single = tail_sums(stack, z, method=method)
        assert single.dtype == np.float64 and single.shape == (3,)
        np.testing.assert_allclose(single, want[z], rtol=1e-9, atol=1e-12 * scale)


@pytest.mark.parametrize("method", METHODS)
def test_tail_sums_of_gaussian_grams(method):
    K = gaussian_kernel_stack(_data(14, 40, n_features=3), bandwidths=default_bandwidths())
    zetas = [0, 1, 2, 4, 8, 16]
    got = tail_sums(K, zetas, method=method)
    np.testing.assert_allclose(got, _brute_force_tail_sums(K, zetas), rtol=1e-8, atol=1e-11)
    # narrow kernels are close to the identity: r = n - zeta
    np.testing.assert_allclose(got[:, 0], 40.0 - np.array(zetas), rtol=1e-6)


@pytest.mark.parametrize("method", METHODS)
def test_zeta_zero_is_the_trace(method):
    stack = _psd_stack(15, 4, 6)
    np.testing.assert_array_equal(tail_sums(stack, 0, method=method),
                                  np.trace(stack, axis1=1, axis2=2))
    np.testing.assert_array_equal(tail_sums(stack, [0], method=method),
                                  np.trace(stack, axis1=1, axis2=2)[None])


@pytest.mark.parametrize("method", METHODS)
def test_one_sample(method):
    got = tail_sums(np.array([[[2.5]], [[0.0]]]), 0, method=method)
    np.testing.assert_array_equal(got, [2.5, 0.0])


@pytest.mark.parametrize("method", METHODS)
def test_low_rank_tail_sums_are_clipped_at_zero(method):
    stack = np.concatenate([np.ones((1, 12, 12)), _psd_stack(16, 2, 12, rank=2)])
    got = tail_sums(stack, [1, 2, 3, 11], method=method)
    assert (got >= 0).all()
    np.testing.assert_allclose(got[:, 0], 0.0, atol=1e-12)
    np.testing.assert_allclose(got[1:, 1:], 0.0, atol=1e-10)


@pytest.mark.parametrize("zeta, shape", [
    (np.int64(2), (3,)), (np.array(2), (3,)), ((1, 2), (2, 3)),
    (np.array([3, 1, 3]), (3, 3)), ([np.int32(0)], (1, 3)),
])
def test_zeta_forms(zeta, shape):
    stack = _psd_stack(17, 3, 5)
    got = tail_sums(stack, zeta)
    assert got.shape == shape
    want = _brute_force_tail_sums(stack, np.atleast_1d(zeta))
    np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-10, atol=1e-10)


def test_float32_and_integer_stacks():
    stack = _psd_stack(18, 2, 7)
    want = tail_sums(stack.astype(np.float32).astype(np.float64), [0, 3])
    got = tail_sums(stack.astype(np.float32), [0, 3])
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12)
    integer = np.round(stack).astype(np.int64)
    np.testing.assert_allclose(tail_sums(integer, 2), tail_sums(integer.astype(float), 2))


def test_eigh_and_eigsh_agree_on_600_samples(monkeypatch):
    X = _data(19, 600, n_features=5)
    K = gaussian_kernel_stack(X, bandwidths=[0.25, 2.0, 16.0])
    zetas = [0, 1, 2, 4, 8, 16]
    dense = tail_sums(K, zetas, method="eigh")
    calls = []
    real_eigsh = scipy.sparse.linalg.eigsh

    def spy(*args, **kwargs):
        calls.append(kwargs["k"])
        return real_eigsh(*args, **kwargs)

    monkeypatch.setattr(scipy.sparse.linalg, "eigsh", spy)
    lanczos = tail_sums(K, zetas, method="eigsh")
    assert calls == [16] * 3  # the top 16 once per kernel, every zeta from them
    np.testing.assert_allclose(lanczos, dense, rtol=1e-8, atol=1e-10)
    # auto: n = 600 > 500 and k = 16 < n / 10, so Lanczos
    np.testing.assert_array_equal(tail_sums(K, zetas, method="auto"), lanczos)
    assert calls == [16] * 6


@pytest.mark.parametrize("n_samples, zeta, expected", [
    (500, 3, "eigh"), (501, 3, "eigsh"), (600, 59, "eigsh"), (600, 60, "eigh"),
    (600, [1, 70], "eigh"),
])
def test_auto_dispatch(monkeypatch, n_samples, zeta, expected):
    used = []

    def fake_eigh(K, subset_by_index, eigvals_only):
        used.append(("eigh", subset_by_index[1] - subset_by_index[0] + 1))
        return np.zeros(subset_by_index[1] - subset_by_index[0] + 1)

    def fake_eigsh(K, k, which, v0, return_eigenvectors):
        used.append(("eigsh", k))
        return np.zeros(k)

    monkeypatch.setattr(scipy.linalg, "eigh", fake_eigh)
    monkeypatch.setattr(scipy.sparse.linalg, "eigsh", fake_eigsh)
    tail_sums(np.eye(n_samples)[None], zeta)
    assert used == [(expected, int(np.max(zeta)))]


# --------------------------------------------------------------------------
# tail_sums: bad inputs


def test_tail_sums_rejects_a_single_gram_matrix():
    with pytest.raises(ValueError, match=r"gram\[None\]"):
        tail_sums(np.eye(3), 1)


@pytest.mark.parametrize("stack, match", [
    (np.ones(3), "3-D"),
    (np.ones((1, 2, 2, 2)), "3-D"),
    (np.ones((2, 3, 4)), "square"),
    (np.ones((0, 3, 3)), "at least one kernel"),
    (np.ones((2, 0, 0)), "at least one kernel and one sample"),
])
def test_tail_sums_rejects_bad_shapes(stack, match):
    with pytest.raises(ValueError, match=match):
        tail_sums(stack, 0)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_tail_sums_rejects_non_finite_kernels(bad):
    stack = _psd_stack(20, 3, 4)
    stack[1, 2, 2] = bad
    with pytest.raises(ValueError, match=r"gram_stack\[1\] contains NaN or infinity"):
        tail_sums(stack, 1)


def test_tail_sums_checks_symmetry_with_tolerance():
    stack = _psd_stack(21, 3, 5)
    slightly = stack.copy()
    slightly[2, 0, 1] *= 1.0 + 1e-12
    np.testing.assert_allclose(tail_sums(slightly, [0, 2]), tail_sums(stack, [0, 2]),
                               rtol=1e-10)
    stack[2, 0, 1] += 1e-3 * np.abs(stack[2]).max()
    with pytest.raises(ValueError, match=r"gram_stack\[2\] is not symmetric"):
        tail_sums(stack, 1)


@pytest.mark.parametrize("stack", [
    sp.csr_matrix(np.eye(3)), np.ones((1, 2, 2), dtype=bool),
    np.ones((1, 2, 2), dtype=complex), np.array([[["a"]]]),
])
def test_tail_sums_rejects_non_real_stacks(stack):
    with pytest.raises(TypeError, match="gram_stack"):
        tail_sums(stack, 0)


@pytest.mark.parametrize("zeta", [1.0, np.float64(2.0), True, np.bool_(False), [1, 2.5],
                                  [True], "1", None, [None]])
def test_tail_sums_rejects_non_integer_zeta(zeta):
    with pytest.raises(TypeError, match="zeta"):
        tail_sums(_psd_stack(22, 1, 4), zeta)


@pytest.mark.parametrize("zeta, match", [
    (-1, r"\[0, 4\)"), (4, r"\[0, 4\)"), ([0, 5], r"got 5"), ([], "at least one"),
    ([[1]], "1-D"),
])
def test_tail_sums_rejects_bad_zeta_values(zeta, match):
    with pytest.raises(ValueError, match=match):
        tail_sums(_psd_stack(23, 1, 4), zeta)


def test_tail_sums_rejects_bad_method():
    stack = _psd_stack(24, 1, 4)
    with pytest.raises(ValueError, match="method must be one of"):
        tail_sums(stack, 1, method="lanczos")
    with pytest.raises(TypeError, match="method"):
        tail_sums(stack, 1, method=None)


@pytest.mark.parametrize("method", ["eigh", "eigsh"])
def test_tail_sums_of_near_identity_gram(method):
    # LAPACK's evr driver fails ("Internal Error") on this near-identity
    # matrix; the fallback computes the whole spectrum.
    rng = np.random.RandomState(0)
    X = 3 * rng.uniform(size=(20, 3))
    gram = gaussian_kernel_stack(X, bandwidths=[2.0 ** -7])
    expected = np.linalg.eigvalsh(gram[0])
    got = tail_sums(gram, [0, 4, 16], method=method)
    np.testing.assert_allclose(got[:, 0], [expected.sum(), expected[:-4].sum(),
                                           expected[:-16].sum()], rtol=1e-12)


# ---------------------------------------------------------------------------
# bandwidths relative to the data (scikit-learn's gamma="scale")


def test_scale_bandwidths_match_sklearn_gamma_scale():
    from sklearn.metrics.pairwise import rbf_kernel

    from mcsparse.kernels import scale_bandwidths

    rng = np.random.RandomState(0)
    X = 7.0 * rng.randn(30, 4) + 3.0
    gamma = 1.0 / (X.shape[1] * X.var())  # SVC(gamma="scale")
    K = gaussian_kernel_stack(X, bandwidths=scale_bandwidths(X, factors=[1.0]))[0]
    np.testing.assert_allclose(K, rbf_kernel(X, gamma=gamma), rtol=1e-12, atol=1e-14)
    default = scale_bandwidths(X)
    np.testing.assert_allclose(default, 2.0 ** np.arange(-4, 5) / (2 * gamma))
    # relative: scaling the features scales the bank by the square
    np.testing.assert_allclose(scale_bandwidths(10.0 * X), 100.0 * default)


@pytest.mark.parametrize("X, factors, error, match", [
    (np.ones((5, 3)), None, ValueError, "zero variance"),
    # X.var() of these equal entries rounds to about 1e-35, not 0 (adversarial review)
    (np.full((6, 3), 0.1), None, ValueError, "zero variance"),
    (np.full((12, 3), 0.7), None, ValueError, "zero variance"),
    (np.eye(3) * 1e200, None, ValueError, "normal range"),
    (np.eye(3) * 1e-170, None, ValueError, "normal range"),
    (np.eye(3), [5e-324], ValueError, "normal range"),
    (np.zeros((0, 3)), None, ValueError, "0 sample"),
    (np.array([[0.0, np.nan], [1.0, 2.0]]), None, ValueError, "NaN"),
    (np.eye(3), [1.0, -2.0], ValueError, r"factors\[1\]"),
    (np.eye(3), ["a"], TypeError, "factors must hold real numbers"),
    (np.eye(3), [], ValueError, "factors must hold at least one"),
])
def test_scale_bandwidths_refuse_bad_input(X, factors, error, match):
    from mcsparse.kernels import scale_bandwidths

    with pytest.raises(error, match=match):
        scale_bandwidths(X, factors)


def test_the_scale_bank_is_not_a_stack_argument():
    with pytest.raises(ValueError, match="scale_bandwidths"):
        gaussian_kernel_stack(np.eye(3), bandwidths="scale")
    with pytest.raises(ValueError, match='None, "scale" or an array'):
        gaussian_kernel_stack(np.eye(3), bandwidths="median")
