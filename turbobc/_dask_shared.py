"""A call's graph through the host's shared memory, for Dask workers on the client's host
(turbobc/_dask.py, ``_scatter``).

A scattered graph travels by TCP as its index arrays (4 bytes a stored edge), once per
worker, and each worker unpickles its own copy: kron24's 1.5 billion stored edges are 6 GB a
worker, and a call on four workers of one host did not finish within 280 s (device call 9).
Where the workers share the client's host, the arrays are written once to a folder in
:data:`SHARED_ROOT` (memory, not disk) and what travels is the folder's name: each worker maps
the same pages read-only (``numpy.load(..., mmap_mode="r")``), the pattern's ones a view of
one value, so the host holds the graph once more whatever the worker count::

    client: graph ──threads──► /dev/shm/turbobc-graph-XXXX/{indptr,indices[,lengths]}.npy
            every worker sees the folder?  (client.run: os.path.isfile)
              yes: the graph pickles as the folder's name   (Graph.__reduce__)
              no:  it pickles as its arrays, as before
    worker: the graph mapped from the folder                (turbobc._graph.mapped_graph)
    call ends (ClusterSweeper.close): the folder removed    (release)

Graphs of fewer than :data:`SHARED_FROM` stored edges, a folder without room for the arrays
(plus a quarter; each file's room reserved before it is written), or a worker that does not
see the folder (another host) keep the TCP path.
A folder left by a client that died holds the name prefix ``turbobc-graph-``.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = ["SHARED_FROM", "SHARED_ROOT", "WRITE_THREADS", "release", "share"]

SHARED_FROM = 2**20
"""Stored edges from which a graph goes through :data:`SHARED_ROOT` (4 MB of int32 indices):
from about there the folder's fixed cost (its files, one round trip to ask the workers) is
less than each worker's copy by TCP. To four CPU workers of the 2-core development machine,
from the scatter to every worker holding the graph: 0.25 million stored edges 0.054 s by TCP,
0.061 s shared; 1 million 0.077 / 0.067 s; 4 million 0.25 / 0.080 s; 16 million 1.93 /
0.13 s. On the 4-GPU host del20's 6.3 million took 0.11 s by TCP to four workers against
0.03 s to one (device call 13); it was 2^26 until then."""

WRITE_THREADS = 8
"""Threads that write a graph's arrays to the folder: one thread took 2.0 s for kron24's 6 GB
(device call 14, the scatter's whole time)."""

SHARED_ROOT = "/dev/shm"
"""Where the folders go: Linux's shared memory (a tmpfs), which every process of the host
maps without a copy."""


def share(client, graph) -> str | None:
    """The folder of ``graph``'s arrays in :data:`SHARED_ROOT` when the graph should go that
    way and every worker of ``client`` sees it (the module docstring), else None. The arrays
    are the ones a graph pickles (``Graph.compact_index_arrays``, and the lengths)."""
    if graph.nnz < SHARED_FROM or not os.path.isdir(SHARED_ROOT):
        return None
    small = graph.compact_index_type()  # (Graph.compact_index_arrays, cast as written)
    arrays = {"indptr": (graph.pattern.indptr, small), "indices": (graph.pattern.indices, small)}
    if graph.lengths is not None:
        arrays["lengths"] = (graph.lengths, graph.lengths.dtype)
    size = sum(array.size * np.dtype(dtype).itemsize for array, dtype in arrays.values())
    if shutil.disk_usage(SHARED_ROOT).free < 1.25 * size:
        return None
    folder = tempfile.mkdtemp(prefix="turbobc-graph-", dir=SHARED_ROOT)
    try:
        for name, (array, dtype) in arrays.items():
            _write(os.path.join(folder, f"{name}.npy"), array, dtype)
        seen = client.run(os.path.isfile, os.path.join(folder, "indices.npy"))
    except OSError:  # (a full folder: the arrays go by TCP)
        release(folder)
        return None
    if not seen or not all(seen.values()):  # a worker on another host
        release(folder)
        return None
    return folder


def _write(path: str, array: np.ndarray, dtype) -> None:
    """``array`` cast to ``dtype`` as an .npy file at ``path``: the file's room reserved (a
    full tmpfs raises OSError here, where a write through the map would end the process with
    SIGBUS), the file mapped, and parts of at least a million entries copied into it on up to
    :data:`WRITE_THREADS` threads (NumPy's copies and casts release the GIL), with no cast
    copy of the whole array first."""
    out = np.lib.format.open_memmap(path, mode="w+", dtype=dtype, shape=array.shape)
    with open(path, "r+b") as file:
        try:
            os.posix_fallocate(file.fileno(), 0, os.fstat(file.fileno()).st_size)
        except OSError as error:
            if error.errno not in (errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
                del out
                raise  # no room: share() sends the graph by TCP
    threads = max(1, min(WRITE_THREADS, os.cpu_count() or 1, array.size // 2**20))
    bounds = np.linspace(0, array.size, threads + 1).astype(np.int64)

    def part(i: int) -> None:
        np.copyto(out[bounds[i]:bounds[i + 1]], array[bounds[i]:bounds[i + 1]],
                  casting="unsafe")  # (the compact type holds every value)

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(part, range(threads)))
    out.flush()
    del out


def release(folder: str | None) -> None:
    """Remove a folder of :func:`share` (the workers' maps stay valid until they let go)."""
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
