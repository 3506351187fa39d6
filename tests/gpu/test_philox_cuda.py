"""gpu_kernels/philox.cuh against pfresample.rng: one contract, two backends.

Needs ``nvcc`` on PATH (skipped otherwise) but no GPU: the device code is only
compiled to PTX, and the parity test runs the header's host path on the CPU.
The parity test is also run with a plain C++ compiler where one is found, which
exercises the header outside CUDA (no ``__host__ __device__`` qualifiers).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from pfresample import rng
from philox_kat import KAT  # Random123 known-answer vectors

HEADER_DIR = Path(__file__).resolve().parents[2] / "gpu_kernels"
HEADER = HEADER_DIR / "philox.cuh"

NVCC = shutil.which("nvcc")
CXX = shutil.which("g++") or shutil.which("clang++")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH: cannot compile philox.cuh")


# n for uniform_int: powers of two and not, up to the largest unsigned int.
INT_NS = [
    1,
    2,
    3,
    7,
    10,
    32,
    100,
    1000,
    1023,
    1024,
    1025,
    65536,
    999_983,
    2**31 - 1,
    2**31,
    2**31 + 1,
    2**32 - 1,
]

# Draws at the edges of the float conversions.
SPECIAL_DRAWS = [
    0,
    1,
    0xFF,
    0x100,
    0x1FF,
    0x7FFFFFFF,
    0x80000000,
    0xFFFFFEFF,
    0xFFFFFF00,
    0xFFFFFFFF,
]

SMOKE_KERNEL = r"""
#include "philox.cuh"
#include "philox.cuh"  // twice: #pragma once must hold

extern "C" __global__ void pfr_smoke(unsigned long long seed, unsigned int n,
                                     unsigned int* out_u, float* out_f, unsigned int count) {
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    const pfr::PhiloxKey key = pfr::split_seed(seed);
    pfr::Philox4x32 ctr;
    ctr.x = i; ctr.y = 0u; ctr.z = 0u; ctr.w = pfr::DOMAIN_GLOBAL;
    const pfr::Philox4x32 b = pfr::philox4x32_10(ctr, key);
    const pfr::Philox4x32 r = pfr::philox4x32_round(ctr, key);
    const pfr::Philox4x32 blk = pfr::philox_block(key, pfr::DOMAIN_PARTICLE, i, 1ull);
    const unsigned int d = pfr::draw_at(key, pfr::DOMAIN_WARP, i / 32u, 5ull);
    pfr::PhiloxStream s = pfr::make_stream(key, pfr::DOMAIN_PARTICLE, i);
    const unsigned int a0 = s.next();
    const unsigned int a1 = s.next();
    const unsigned int a2 = s.word(9ull);
    unsigned int hi;
    const unsigned int lo = pfr::mulhilo32(b.x, blk.y, &hi);
    out_u[i] = b.word(i & 3u) ^ r.y ^ d ^ lo ^ hi ^ a1 ^ pfr::uniform_int(a0, n);
    out_f[i] = pfr::uniform_float(a0) + pfr::uniform_accept(a2) + pfr::uniform_float23(a1);
}
"""

PARITY_PROGRAM = r"""
// Reads one request per line on stdin, answers one line on stdout:
//   B c0 c1 c2 c3 k0 k1            -> philox4x32_10, four words
//   D seed domain stream counter   -> draw_at
//   U draw                         -> uniform_float, _accept, _float23 bits, uniform_int(n)...
//   S seed domain stream first m   -> m x PhiloxStream::next() from counter `first`
//   R seed domain stream m c_1..c_m -> PhiloxStream::word(c_j), random access
#include <cstdio>
#include <cstring>
#include "philox.cuh"

static const unsigned int NS[] = {@NS@};

static unsigned int float_bits(float f) {
    unsigned int u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

int main() {
    char op[2];
    while (std::scanf("%1s", op) == 1) {
        if (op[0] == 'B') {
            pfr::Philox4x32 c;
            pfr::PhiloxKey k;
            if (std::scanf("%x %x %x %x %x %x", &c.x, &c.y, &c.z, &c.w, &k.k0, &k.k1) != 6)
                return 2;
            const pfr::Philox4x32 o = pfr::philox4x32_10(c, k);
            std::printf("%08x %08x %08x %08x\n", o.x, o.y, o.z, o.w);
        } else if (op[0] == 'D') {
            unsigned long long seed, counter;
            unsigned int domain, stream;
            if (std::scanf("%llu %u %u %llu", &seed, &domain, &stream, &counter) != 4) return 2;
            std::printf("%08x\n", pfr::draw_at(pfr::split_seed(seed), domain, stream, counter));
        } else if (op[0] == 'U') {
            unsigned int d;
            if (std::scanf("%u", &d) != 1) return 2;
            std::printf("%08x %08x %08x", float_bits(pfr::uniform_float(d)),
                        float_bits(pfr::uniform_accept(d)), float_bits(pfr::uniform_float23(d)));
            for (unsigned int j = 0; j < sizeof NS / sizeof NS[0]; ++j)
                std::printf(" %u", pfr::uniform_int(d, NS[j]));
            std::printf("\n");
        } else if (op[0] == 'S') {
            unsigned long long seed, first;
            unsigned int domain, stream, m;
            if (std::scanf("%llu %u %u %llu %u", &seed, &domain, &stream, &first, &m) != 5)
                return 2;
            pfr::PhiloxStream s = pfr::make_stream(pfr::split_seed(seed), domain, stream, first);
            for (unsigned int j = 0; j < m; ++j) std::printf(j ? " %08x" : "%08x", s.next());
            std::printf("\n");
        } else if (op[0] == 'R') {
            unsigned long long seed;
            unsigned int domain, stream, m;
            if (std::scanf("%llu %u %u %u", &seed, &domain, &stream, &m) != 4) return 2;
            pfr::PhiloxStream s = pfr::make_stream(pfr::split_seed(seed), domain, stream);
            for (unsigned int j = 0; j < m; ++j) {
                unsigned long long c;
                if (std::scanf("%llu", &c) != 1) return 2;
                std::printf(j ? " %08x" : "%08x", s.word(c));
            }
            std::printf("\n");
        } else {
            return 3;
        }
    }
    return 0;
}
"""


def _run(cmd, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kwargs)


def _assert_ok(proc: subprocess.CompletedProcess, what: str) -> None:
    assert proc.returncode == 0, (
        f"{what} failed ({proc.returncode}):\n{' '.join(map(str, proc.args))}\n"
        f"{proc.stdout}\n{proc.stderr}"
    )


def test_header_has_no_includes():
    """NVRTC (cupy.RawModule) has no system headers: the header must stand alone."""
    text = HEADER.read_text()
    assert not re.search(r"^\s*#\s*include\b", text, re.MULTILINE)
    assert re.search(r"^#pragma once$", text, re.MULTILINE)
    assert "rng.py" in text.split("#pragma once")[0], "top comment must name rng.py's contract"


@needs_nvcc
def test_header_compiles_to_ptx(tmp_path):
    src = tmp_path / "smoke.cu"
    src.write_text(SMOKE_KERNEL)
    ptx = tmp_path / "smoke.ptx"
    proc = _run(
        [
            NVCC,
            "-ptx",
            "-arch=sm_90",
            "-std=c++17",
            "-Werror",
            "all-warnings",
            "-I",
            str(HEADER_DIR),
            "-o",
            str(ptx),
            str(src),
        ]
    )
    _assert_ok(proc, "nvcc -ptx")
    text = ptx.read_text()
    assert ".entry pfr_smoke" in text
    # The device path of the multiplications (__umulhi) was taken.
    assert "mul.hi.u32" in text


def _requests():
    """The parity requests (lines for the program) and, for each, the expected
    answer line computed with pfresample.rng."""
    gen = np.random.default_rng(20240611)
    lines, expected = [], []

    def hexwords(words) -> str:
        return " ".join(f"{int(w):08x}" for w in words)

    for ctr, key, out in KAT:
        lines.append("B " + " ".join(f"{v:x}" for v in (*ctr, *key)))
        expected.append(hexwords(out))
    for _ in range(64):
        ctr = gen.integers(0, 2**32, size=4, dtype=np.uint64)
        key = gen.integers(0, 2**32, size=2, dtype=np.uint64)
        lines.append("B " + " ".join(f"{int(v):x}" for v in (*ctr, *key)))
        expected.append(hexwords(rng.philox4x32_10(ctr, key)))

    seeds = [0, 1, 2**32 - 1, 2**32, 2**32 + 1, 2**64 - 1, 0x243F6A8885A308D3]
    seeds += [int(s) for s in gen.integers(2**32, 2**64, size=5, dtype=np.uint64)]
    domains = [rng.DOMAIN_PARTICLE, rng.DOMAIN_WARP, rng.DOMAIN_GLOBAL, 7, 2**32 - 1]
    edge_counters = [0, 1, 2, 3, 4, 5, 2**32 - 1, 2**32, 2**34 - 1, 2**34, 2**34 + 3, 2**64 - 1]
    all_draws = []
    for seed in seeds:
        for domain in domains:
            m = 50
            # Every piece uint64 before concatenating: uint64 with int64 would give float64.
            streams = np.concatenate(
                [
                    np.array([0, 1, 31, 32, 2**32 - 1], dtype=np.uint64),
                    gen.integers(0, 1000, size=10, dtype=np.uint64),
                    gen.integers(0, 2**32, size=m - 15, dtype=np.uint64),
                ]
            )
            counters = np.concatenate(
                [
                    np.array(edge_counters, dtype=np.uint64),
                    gen.integers(0, 64, size=18, dtype=np.uint64),
                    gen.integers(0, 2**64, size=m - 30, dtype=np.uint64),
                ]
            )
            assert streams.dtype == counters.dtype == np.uint64
            got = rng.draws(seed, streams, counters, domain)
            all_draws.append(got)
            for s, c, d in zip(streams, counters, got, strict=True):
                lines.append(f"D {seed} {domain} {int(s)} {int(c)}")
                expected.append(f"{int(d):08x}")

    all_draws = np.concatenate([np.asarray(SPECIAL_DRAWS, dtype=np.uint64), *all_draws])
    f_bits = rng.uniform_float(all_draws).astype(np.float32).view(np.uint32)
    a_bits = rng.uniform_accept(all_draws).astype(np.float32).view(np.uint32)
    m_bits = rng.uniform_float23(all_draws).astype(np.float32).view(np.uint32)
    ints = [rng.uniform_int(all_draws, n) for n in INT_NS]
    for j, d in enumerate(all_draws):
        lines.append(f"U {int(d)}")
        expected.append(
            f"{int(f_bits[j]):08x} {int(a_bits[j]):08x} {int(m_bits[j]):08x} "
            + " ".join(str(int(col[j])) for col in ints)
        )

    for seed in (3, 2**40 + 17, 2**64 - 1):
        for domain, stream in ((rng.DOMAIN_PARTICLE, 5), (rng.DOMAIN_WARP, 2**32 - 1)):
            for first in (0, 1, 2, 3, 5, 2**34 - 7, 2**64 - 23):
                m = 23
                counters = np.uint64(first) + np.arange(m, dtype=np.uint64)
                lines.append(f"S {seed} {domain} {stream} {first} {m}")
                expected.append(hexwords(rng.draws(seed, stream, counters, domain)))
            access = np.array(
                [5, 4, 0, 7, 7, 3, 2**34 + 1, 1, 2, 2**34 + 2, 6, 2**64 - 1, 0], dtype=np.uint64
            )
            lines.append(
                f"R {seed} {domain} {stream} {len(access)} " + " ".join(str(int(c)) for c in access)
            )
            expected.append(hexwords(rng.draws(seed, stream, access, domain)))
    return lines, expected


def _compilers():
    return [
        pytest.param("nvcc", marks=needs_nvcc),
        pytest.param(
            "c++",
            marks=pytest.mark.skipif(CXX is None, reason="no host C++ compiler (g++/clang++)"),
        ),
    ]


@pytest.fixture(scope="module", params=_compilers())
def parity_program(request, tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp(f"philox_{request.param}")
    src = tmp / "parity.cu"
    src.write_text(PARITY_PROGRAM.replace("@NS@", ", ".join(f"{n}u" for n in INT_NS)))
    exe = tmp / "parity"
    if request.param == "nvcc":
        cmd = [NVCC, "-x", "cu", "-std=c++17", "-O2", "-Werror", "all-warnings"]
    else:
        cmd = [CXX, "-x", "c++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror"]
    proc = _run([*cmd, "-I", str(HEADER_DIR), "-o", str(exe), str(src)])
    _assert_ok(proc, f"{request.param} (host parity program)")
    return exe


@pytest.mark.slow
def test_host_parity_with_numpy(parity_program):
    lines, expected = _requests()
    proc = _run([str(parity_program)], input="\n".join(lines) + "\n")
    _assert_ok(proc, "parity program")
    got = proc.stdout.splitlines()
    assert len(got) == len(expected)
    mismatches = [
        (req, want, have)
        for req, want, have in zip(lines, expected, got, strict=True)
        if want != have
    ]
    assert not mismatches, f"{len(mismatches)} of {len(lines)} answers differ; first: " + "; ".join(
        f"{r!r}: numpy {w!r} vs header {h!r}" for r, w, h in mismatches[:5]
    )
