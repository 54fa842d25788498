"""Memory limits: parsing ``memory_limit=``, and how much host memory a run may use.

:func:`parse_memory_limit` turns the user's ``memory_limit`` (bytes as an int, or a string such
as ``"4GB"`` or ``"512MiB"``) into bytes. :func:`available_memory` says how much host memory
is available now: the lower of the kernel's ``MemAvailable`` (/proc/meminfo) and the room left
under the cgroup limit (v2 ``memory.max``, v1 ``memory.limit_in_bytes``) of this process's
cgroup and its ancestors. The CPU engines size their batches from these
(:func:`turbobc.engines.cpu.memory.plan_chunks`, :func:`turbobc.engines.graphblas.batch_size_for`),
the GPU engines compare their models with the limit.
"""

from __future__ import annotations

import numbers
import os
import re
from pathlib import Path

__all__ = ["UNITS", "parse_memory_limit", "available_memory", "meminfo_available",
           "cgroup_available", "format_bytes"]

UNITS = {
    "B": 1,
    "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
    "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40,
}
"""Accepted units of a ``memory_limit`` string (case-insensitive): decimal and binary."""

_LIMIT_TEXT = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([A-Za-z]*)\s*$")

NO_CGROUP_LIMIT = 2**60
"""A cgroup v1 limit at or above this means "no limit" (the kernel writes 2^63 rounded down
to a page)."""


def parse_memory_limit(value) -> int | None:
    """``memory_limit`` in bytes.

    Parameters
    ----------
    value : None, int or str
        ``None`` (size from the memory available), a positive number of bytes, or a string
        of a number and a unit: B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB
        (powers of 1024), case-insensitive, e.g. ``"4GB"``, ``"512MiB"``, ``"1.5 GiB"``; a
        bare number string means bytes.

    Returns
    -------
    int or None
        Whole bytes (rounded down), or None.

    Raises
    ------
    TypeError
        ``value`` is not None, an int or a str (a bool or a float included).
    ValueError
        A string that is not a number with a known unit, or a limit below one byte.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, str)):
        raise TypeError("memory_limit must be None, an int number of bytes or a string such "
                        f"as '4GB' or '512MiB'; got {type(value).__name__} {value!r}")
    if isinstance(value, str):
        match = _LIMIT_TEXT.match(value)
        unit = match.group(2).upper() if match else None
        if match is None or (unit and unit not in UNITS):
            raise ValueError("memory_limit must be a number of bytes or a number with a unit "
                             "(B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), e.g. '4GB' or '512MiB'; "
                             f"got {value!r}")
        number = match.group(1)
        scale = UNITS[unit or "B"]
        if "." in number:
            whole, _, frac = number.partition(".")
            nbytes = int(whole or "0") * scale + int(frac or "0") * scale // 10 ** len(frac)
        else:
            nbytes = int(number) * scale
    else:
        nbytes = int(value)
    if nbytes < 1:
        raise ValueError(f"memory_limit must be at least 1 byte; got {value!r}")
    return nbytes


def format_bytes(nbytes: int) -> str:
    """``nbytes`` as an exact count and in binary units, e.g. ``'1610612736 bytes (1.5 GiB)'``."""
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes} bytes ({nbytes / scale:.3g} {unit})"
    return f"{nbytes} bytes"


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def meminfo_available(path: str | os.PathLike = "/proc/meminfo") -> int | None:
    """``MemAvailable`` of /proc/meminfo in bytes (``MemFree`` on kernels without it), or None
    when the file cannot be read."""
    text = _read(Path(path))
    if text is None:
        return None
    fields = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            fields[key.strip()] = int(parts[0]) * (1024 if parts[1:2] == ["kB"] else 1)
    return fields.get("MemAvailable", fields.get("MemFree"))


def _stat_value(text: str | None, key: str) -> int:
    for line in (text or "").splitlines():
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return 0


def _cgroup_dirs(root: Path, proc_cgroup: Path) -> list[tuple[str, Path]]:
    """(version, directory) of this process's memory cgroup and its ancestors, innermost
    first, for cgroup v2 (``0::/path``) and v1 (``N:memory:/path`` or a shared hierarchy)."""
    text = _read(proc_cgroup) or ""
    found = []
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, rel = parts
        if controllers == "":
            version, base = "v2", root
        elif "memory" in controllers.split(","):
            version, base = "v1", root / "memory"
        else:
            continue
        rel_path = Path(rel.strip().lstrip("/"))
        chain = [rel_path, *rel_path.parents] if rel_path.parts else [Path()]
        for sub in chain:
            found.append((version, base / sub))
    # Inside a container the cgroup namespace may hide the path: the mount root is then the
    # process's own cgroup.
    found.append(("v2", root))
    found.append(("v1", root / "memory"))
    return found


def cgroup_available(root: str | os.PathLike = "/sys/fs/cgroup",
                     proc_cgroup: str | os.PathLike = "/proc/self/cgroup") -> int | None:
    """Bytes left under the tightest cgroup memory limit, or None when no limit is set.

    The room under a limit is ``limit - usage + inactive file pages`` (page cache the kernel
    reclaims before it would kill the process), for cgroup v2 (``memory.max``,
    ``memory.current``, ``inactive_file`` of ``memory.stat``) and v1
    (``memory.limit_in_bytes``, ``memory.usage_in_bytes``, ``total_inactive_file``).
    """
    best = None
    seen = set()
    for version, directory in _cgroup_dirs(Path(root), Path(proc_cgroup)):
        if directory in seen:
            continue
        seen.add(directory)
        if version == "v2":
            limit_text = _read(directory / "memory.max")
            usage_text = _read(directory / "memory.current")
            inactive_key = "inactive_file"
        else:
            limit_text = _read(directory / "memory.limit_in_bytes")
            usage_text = _read(directory / "memory.usage_in_bytes")
            inactive_key = "total_inactive_file"
        if limit_text is None or limit_text.strip() in ("", "max"):
            continue
        try:
            limit = int(limit_text.strip())
        except ValueError:
            continue
        if limit >= NO_CGROUP_LIMIT:
            continue
        try:
            usage = int((usage_text or "0").strip())
        except ValueError:
            usage = 0
        inactive = _stat_value(_read(directory / "memory.stat"), inactive_key)
        room = max(0, limit - max(0, usage - inactive))
        best = room if best is None else min(best, room)
    return best


def available_memory(*, meminfo: str | os.PathLike = "/proc/meminfo",
                     cgroup_root: str | os.PathLike = "/sys/fs/cgroup",
                     proc_cgroup: str | os.PathLike = "/proc/self/cgroup") -> int:
    """Host memory a run may use now, in bytes.

    The lower of ``MemAvailable`` (:func:`meminfo_available`) and the room under the cgroup
    limit (:func:`cgroup_available`); where neither can be read (not Linux), the physical
    memory not in use as ``os.sysconf`` reports it, else 4 GiB.
    """
    candidates = [x for x in (meminfo_available(meminfo),
                              cgroup_available(cgroup_root, proc_cgroup)) if x is not None]
    if not candidates:
        try:
            candidates.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (AttributeError, ValueError, OSError):
            candidates.append(4 * 2**30)
    return int(min(candidates))
