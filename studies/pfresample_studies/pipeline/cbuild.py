"""Compiled CPU code of the studies: a source file built once with the host's C or
C++ compiler into a cache folder (``PFRESAMPLE_NATIVE_CACHE``, else
~/.cache/pfresample/native), keyed by the source text, the headers it may include, the
compiler and its flags, and written atomically; loaded by the study with ctypes.

Two flag sets: FLAGS, the documents' kind of baseline (-O3 for the host, OpenMP), and
BEST_FLAGS, the best CPU code we can write (the same, told to use the widest vectors and
to let sqrt vectorise). The headers every study may include (``csrc/``: the counter-based
random numbers and the STREAM-style copy of the particle filters' CPU code) are on
the include path of every build.

Where no compiler is found, :func:`compiler` raises a RuntimeError that says so; the
studies' NumPy code still runs."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

COMMON = Path(__file__).resolve().parent / "csrc"
FLAGS = ("-O3", "-march=native", "-fopenmp", "-shared", "-fPIC", "-std=c11")
CXX_FLAGS = ("-O3", "-march=native", "-pthread", "-shared", "-fPIC", "-std=c++20")
# The best CPU code: the same flags, with the compiler told to use a CPU's widest
# vectors (512 bits where it has AVX-512; gcc's tuning for some of them prefers 256).
# -fno-math-errno lets sqrt vectorise (errno is the only difference: sqrt is correctly
# rounded either way).
BEST_FLAGS = (*FLAGS, "-mprefer-vector-width=512", "-fno-math-errno")


def compiler(cxx: bool = False) -> str:
    """The C compiler (``CC``, else cc, gcc, clang) or, with ``cxx``, the C++ one
    (``CXX``, else c++, g++, clang++)."""
    names = ("CXX", "c++", "g++", "clang++") if cxx else ("CC", "cc", "gcc", "clang")
    for name in (os.environ.get(names[0]), *names[1:]):
        if name and shutil.which(name):
            return name
    raise RuntimeError(
        f"no {'C++' if cxx else 'C'} compiler found (set {names[0]}, or install "
        f"{'/'.join(names[1:])}): the studies' compiled CPU code needs one"
    )


def cache_dir() -> Path:
    """``PFRESAMPLE_NATIVE_CACHE`` or ~/.cache/pfresample/native."""
    default = Path.home() / ".cache" / "pfresample" / "native"
    return Path(os.environ.get("PFRESAMPLE_NATIVE_CACHE", default))


def build(source: Path, *, prefix: str, cxx: bool = False,
          flags: tuple[str, ...] | None = None) -> Path:  # fmt: skip
    """The shared library of ``source`` (once per source text, compiler and flags,
    written atomically into the cache as ``<prefix>_<stem>_<key>.so``); ``flags``
    default to FLAGS (CXX_FLAGS with ``cxx``). The headers beside the source and in
    ``csrc/`` are part of the key: a header's edit rebuilds what includes it."""
    cc = compiler(cxx)
    flags = flags or (CXX_FLAGS if cxx else FLAGS)
    headers = sorted(source.parent.glob("*.h")) + sorted(COMMON.glob("*.h"))
    text = source.read_bytes() + b"".join(h.read_bytes() for h in headers)
    key = hashlib.sha256(text + " ".join((cc, *flags, sys.platform)).encode()).hexdigest()[:16]
    path = cache_dir() / f"{prefix}_{source.stem}_{key}.so"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        command = [cc, *flags, f"-I{COMMON}", str(source), "-o", str(tmp)]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"building {source.name} with {cc} failed:\n{done.stderr}")
        os.replace(tmp, path)  # atomic: a concurrent build writes the same bytes
    return path
