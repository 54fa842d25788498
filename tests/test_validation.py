"""Every raise of the validation function, with its message pinned."""

from __future__ import annotations

import re

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import turbobc
import turbobc._validation as validation
from turbobc.exceptions import GPUUnavailableError, TurboBCError

PATH = sp.csr_array(([1.0] * 4, ([0, 1, 1, 2], [1, 0, 2, 1])), shape=(3, 3))
ARC = sp.csr_array(([1.0], ([0], [1])), shape=(3, 3))


def _raises(exc, message, *args, **kwargs):
    kwargs.setdefault("engine", "graphblas")
    with pytest.raises(exc, match=re.escape(message)):
        turbobc.bc(*args, **kwargs)


def test_not_a_sparse_matrix():
    _raises(TypeError, "A must be a scipy.sparse matrix or array (a 2-D numpy array or a "
                       "networkx graph is converted); got builtins.list", [[0, 1], [1, 0]])


def test_not_2d():
    _raises(ValueError, "A must be 2-D; got 1-D shape (3,)", np.zeros(3))
    _raises(ValueError, "A must be 2-D; got 1-D shape (3,)", sp.coo_array(np.zeros(3)))


def test_not_square():
    _raises(ValueError, "A must be square; got shape (3, 4)", sp.csr_array((3, 4)))
    _raises(ValueError, "A must be square; got shape (2, 1)", np.zeros((2, 1)))


def test_complex_dtype():
    _raises(TypeError, "A must have a real dtype (bool, integer or float); got complex128: "
                       "pass abs(A) or A.real", PATH.astype(np.complex128))


def test_non_numeric_dtype():
    _raises(TypeError, "A must have a numeric dtype (bool, integer or float); got <U1",
            np.array([["a", "b"], ["c", "d"]]))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_and_inf(bad):
    A = PATH.copy()
    A.data[2] = bad
    _raises(ValueError, "A contains 1 NaN or infinite value(s), the first at (1, 2); BC "
                        "ignores values but these usually mean a bug upstream", A)


@pytest.mark.parametrize("name", ["normalized", "endpoints", "directed"])
def test_flags_must_be_bool(name):
    _raises(TypeError, f"{name} must be True or False; got str 'yes'", PATH, **{name: "yes"})


@pytest.mark.parametrize("progress", ["yes", 1, {}, None], ids=["str", "int", "dict", "None"])
def test_progress_must_be_bool_or_a_bar(progress):
    _raises(TypeError, "progress must be True or False, or an object with an update(n) method "
                       f"such as a tqdm bar; got {type(progress).__name__} {progress!r}", PATH,
            progress=progress)


def test_sources_out_of_range():
    _raises(ValueError, "sources must be vertex indices in [0, 3); got 3 at position 1", PATH,
            sources=[0, 3])
    _raises(ValueError, "sources must be vertex indices in [0, 3); got -1 at position 0",
            PATH, sources=[-1])


def test_sources_duplicate():
    _raises(ValueError, "sources must be distinct; vertex 1 appears 2 times", PATH,
            sources=[1, 2, 1])


def test_sources_not_integers():
    _raises(TypeError, "sources must hold integer vertex indices; got float 1.5 at position 0",
            PATH, sources=[1.5])
    _raises(TypeError, "sources must hold integer vertex indices; got bool True at position 0",
            PATH, sources=[True])


def test_sources_not_a_sequence():
    _raises(TypeError, "sources must be a sequence of vertex indices; got int 2", PATH,
            sources=2)
    _raises(TypeError, "sources must be a sequence of vertex indices; got str '01'", PATH,
            sources="01")


def test_sources_must_be_nodes_for_networkx_input():
    _raises(ValueError, "sources must be nodes of the graph; 'Nobody' is not",
            nx.florentine_families_graph(), sources=["Medici", "Nobody"])


@pytest.mark.parametrize("k", [0, -2, 4])
def test_k_out_of_range(k):
    _raises(ValueError, f"k must be between 1 and the number of vertices n = 3; got {k}",
            PATH, k=k)


@pytest.mark.parametrize("k", [1.0, "2", True])
def test_k_not_integer(k):
    _raises(TypeError, f"k must be an integer or None; got {type(k).__name__} {k!r}", PATH, k=k)


def test_k_and_sources_together():
    _raises(ValueError, "give either k (sample k sources) or sources (use exactly these), "
                        "not both", PATH, k=1, sources=[0])


def test_seed_of_unknown_kind():
    _raises(TypeError, "seed must be None, an int, a random.Random, or a NumPy RandomState or "
                       "Generator; got str 'x'", PATH, k=2, seed="x")


@pytest.mark.parametrize("make", [lambda: np.random.RandomState(3),
                                  lambda: np.random.default_rng(3)],
                         ids=["RandomState", "Generator"])
def test_numpy_seeds_sample_as_networkx(make):
    """The seed kinds the docstring lists: NumPy states sample what networkx samples with an
    equal state, and the caller's state is advanced by the draw, as in networkx."""
    G = nx.les_miserables_graph()
    A = nx.to_scipy_sparse_array(G, format="csr")
    ours_state, theirs_state = make(), make()
    ours = turbobc.bc(A, k=9, seed=ours_state, engine="graphblas")
    theirs = nx.betweenness_centrality(G, k=9, seed=theirs_state)
    np.testing.assert_allclose(ours, [theirs[v] for v in G], rtol=1e-12)
    assert ours_state.random() == theirs_state.random()  # advanced alike
    assert make().random() != theirs_state.random()  # and advanced at all


def test_seed_docstring_lists_every_accepted_kind():
    import inspect

    doc = inspect.getdoc(turbobc.bc)
    seed_paragraph = doc[doc.index("seed :"):doc.index("normalized :")]
    for kind in ("None", "int", "random.Random", "numpy.random.RandomState",
                 "numpy.random.Generator"):
        assert kind in seed_paragraph


@pytest.mark.parametrize("empty", [[], (), np.array([], dtype=np.int64), range(0)],
                         ids=["list", "tuple", "array", "range"])
def test_sources_empty(empty):
    _raises(ValueError, "sources is empty; name at least one source vertex (sources=None uses "
                        "every vertex)", PATH, sources=empty)
    _raises(ValueError, "sources is empty", nx.florentine_families_graph(), sources=empty)


def test_undirected_on_asymmetric_pattern():
    _raises(ValueError, "directed=False but the pattern of A is not symmetric (1 edges lack "
                        "their reverse); pass directed=True, or symmetrize first: A = A + A.T",
            ARC, directed=False)


def test_unknown_engine():
    _raises(ValueError, "engine must be one of 'auto', 'gpu', 'cpu', 'graphblas'; got 'cuda'",
            PATH, engine="cuda")


def test_unknown_kernel():
    _raises(ValueError, "kernel must be one of 'auto', 'sccsc', 'sccooc', 'vecsc'; got "
                        "'csr'", PATH, kernel="csr")


def test_kernel_with_cpu_engine():
    """The graphblas engine's can_serve refuses a GPU kernel; validation passes its reason on."""
    _raises(ValueError, "engine='graphblas' cannot run this: kernel='vecsc' names a GPU kernel; "
                        "the graphblas engine takes kernel='auto'; pass engine='gpu' or 'auto' "
                        "instead", PATH, kernel="vecsc")


@pytest.fixture
def no_gpu(monkeypatch):
    """The GPU engine cannot serve, whatever this machine has (its can_serve says why)."""
    from turbobc.engines.gpu.engine import GpuEngine

    monkeypatch.setattr(GpuEngine, "can_serve",
                        lambda self, problem: "no usable GPU: CuPy is not importable")


def test_gpu_engine_without_gpu(no_gpu):
    _raises(GPUUnavailableError, "engine='gpu' needs a usable GPU, and the GPU engine cannot "
                                 "run here (no usable GPU: CuPy is not importable). Use "
                                 "engine='cpu' (or 'auto') to run on the CPU",
            PATH, engine="gpu")


def test_named_kernel_without_gpu(no_gpu):
    _raises(GPUUnavailableError, "kernel='sccsc' needs a usable GPU, and the GPU engine cannot "
                                 "run here (no usable GPU: CuPy is not importable). Use "
                                 "engine='cpu' (or 'auto') to run on the CPU", PATH,
            engine="auto", kernel="sccsc")


def test_auto_falls_back_to_cpu_without_gpu(no_gpu):
    np.testing.assert_array_equal(turbobc.bc(PATH, engine="auto"), [0.0, 1.0, 0.0])


def test_gpu_error_is_a_runtime_error_and_a_turbobc_error():
    assert issubclass(GPUUnavailableError, RuntimeError)
    assert issubclass(GPUUnavailableError, TurboBCError)


def test_bad_input_is_reported_before_the_missing_gpu(no_gpu):
    _raises(ValueError, "A must be square", sp.csr_array((2, 3)), engine="gpu")


def test_directed_false_on_symmetric_pattern_is_fine():
    np.testing.assert_array_equal(turbobc.bc(PATH, directed=False, engine="graphblas"),
                                  [0.0, 1.0, 0.0])


@pytest.mark.gpu
def test_undirected_request_on_asymmetric_pattern_raises_on_the_gpu_engine():
    _raises(ValueError, "directed=False but the pattern of A is not symmetric (1 edges lack "
                        "their reverse)", ARC, directed=False, engine="gpu")


def test_graph_degrees():
    # in-degree counts the stored entries of each column, out-degree those of each row
    A = sp.csr_array(([1.0] * 4, ([0, 0, 1, 2], [1, 2, 2, 0])), shape=(4, 4))
    graph = validation._pattern_graph(A, True)
    np.testing.assert_array_equal(graph.out_degree, [2, 1, 1, 0])
    np.testing.assert_array_equal(graph.in_degree, [1, 1, 2, 0])
    undirected = validation._pattern_graph(sp.csr_array(A + A.T), None)
    assert not undirected.directed
    np.testing.assert_array_equal(undirected.in_degree, undirected.out_degree)


def test_index_dtype_keeps_slack_below_2_31():
    from turbobc._graph import INT32_LIMIT, index_dtype_for

    assert index_dtype_for(10, INT32_LIMIT - 1) == np.int32
    assert index_dtype_for(10, INT32_LIMIT) == np.int64
    assert index_dtype_for(INT32_LIMIT, 10) == np.int64
    assert INT32_LIMIT + 32 < 2**31  # a step of 32 past the last entry stays in int32
