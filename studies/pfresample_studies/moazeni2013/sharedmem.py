"""Moazeni (2013), chapter 5: shared-memory reuse (§5.2, Fig 45). A kernel declares
its ``__shared__`` arrays and, for each stage between two ``__syncthreads()``, the
arrays the stage defines and uses; from them:

1. the live range of each array (Fig 45, line 3): the stages from a definition to
   each use it reaches, around the loop for a kernel whose stages repeat (a kernel
   that marches plane by plane carries arrays from one trip to the next);
2. the interference graph (line 4): an edge where two live ranges share a stage;
3. its colouring (lines 6-10): from the first array, each array adjacent to those
   already coloured takes the least colour none of its coloured neighbours has
   (arrays of another component start again from their first);
4. the partitions (line 11): one a colour, as large as its largest array.

Two arrays share a partition only if no stage holds both alive, and a barrier ends
every stage, so the reuse is safe as the thesis requires (§5.2.2). The kernels of
``kernels/tv.cu`` and ``chanvese.cu`` take the partition of each
array as a macro (``SLOT_<NAME>``): ``plan(...).macros()`` applies the reuse, and
``identity`` gives every array its own partition (the straightforward kernel).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Stage:
    """One stage of a kernel: the arrays it writes and reads."""

    name: str
    defines: tuple[str, ...] = ()
    uses: tuple[str, ...] = ()


@dataclass(frozen=True)
class Kernel:
    """A kernel's shared arrays (name -> bytes) and its stages, in order;
    ``cyclic`` where the stages repeat (a loop whose arrays live across trips)."""

    name: str
    arrays: Mapping[str, int]
    stages: Sequence[Stage]
    cyclic: bool = False

    def __post_init__(self):
        for stage in self.stages:
            unknown = set(stage.defines + stage.uses) - set(self.arrays)
            if unknown:
                raise ValueError(f"{self.name}: stage {stage.name} names undeclared "
                                 f"arrays {sorted(unknown)}")  # fmt: skip


def live_ranges(kernel: Kernel) -> dict[str, frozenset[int]]:
    """The stages at which each array is alive (Fig 45, line 3): from each use
    back to the definition that reaches it (around the loop if ``cyclic``).
    A use that no definition reaches is an error (an array read before written)."""
    n = len(kernel.stages)
    live: dict[str, set[int]] = {name: set() for name in kernel.arrays}
    for u, stage in enumerate(kernel.stages):
        for name in stage.defines:
            live[name].add(u)
        for name in stage.uses:
            live[name].add(u)
            s = u  # a stage reads the value from before it, so the walk starts at u - 1
            for _ in range(n):
                s -= 1
                if s < 0 and not kernel.cyclic:
                    raise ValueError(f"{kernel.name}: {name} is read at {stage.name} "
                                     "before any stage writes it")  # fmt: skip
                s %= n
                live[name].add(s)
                if name in kernel.stages[s].defines:
                    break
            else:
                raise ValueError(f"{kernel.name}: no stage writes {name}")
    return {name: frozenset(stages) for name, stages in live.items()}


def interference(kernel: Kernel) -> dict[str, set[str]]:
    """Fig 45, line 4: an edge between two arrays alive at a common stage."""
    live = live_ranges(kernel)
    return {a: {b for b in live if b != a and live[a] & live[b]} for a in live}


def colour(kernel: Kernel) -> dict[str, int]:
    """Fig 45, lines 6-10: grow the coloured set from the first declared array
    through its neighbours (breadth first, in declaration order), each array
    taking the least colour its coloured neighbours lack."""
    graph = interference(kernel)
    colours: dict[str, int] = {}
    for root in kernel.arrays:
        if root in colours:
            continue
        queue = [root]
        while queue:
            node = queue.pop(0)
            if node in colours:
                continue
            taken = {colours[m] for m in graph[node] if m in colours}
            colours[node] = next(k for k in range(len(graph)) if k not in taken)
            queue += [m for m in kernel.arrays if m in graph[node] and m not in colours]
    return colours


@dataclass(frozen=True)
class Plan:
    """The partitions of one kernel: each array's partition and each partition's bytes."""

    kernel: Kernel
    slots: dict[str, int]
    sizes: tuple[int, ...]

    @property
    def bytes_before(self) -> int:
        return sum(self.kernel.arrays.values())

    @property
    def bytes_after(self) -> int:
        return sum(self.sizes)

    @property
    def saving(self) -> float:
        return 1 - self.bytes_after / self.bytes_before

    def macros(self) -> tuple[str, ...]:
        """NVRTC options naming each array's partition (``-DSLOT_U_CUR=0``) and
        their number (``-DSLOTS=k``); the kernels take equal-sized partitions."""
        if len(set(self.kernel.arrays.values())) != 1:
            raise ValueError(f"{self.kernel.name}: the kernels' partitions are equal-sized")
        return (*(f"-DSLOT_{name.upper()}={k}" for name, k in self.slots.items()),
                f"-DSLOTS={len(self.sizes)}")  # fmt: skip


def plan(kernel: Kernel) -> Plan:
    """Fig 45's reuse: one partition a colour, sized by its largest array (line 11)."""
    slots = colour(kernel)
    sizes = [0] * (max(slots.values()) + 1)
    for name, k in slots.items():
        sizes[k] = max(sizes[k], kernel.arrays[name])
    return Plan(kernel, slots, tuple(sizes))


def identity(kernel: Kernel) -> Plan:
    """No reuse: every array its own partition (the straightforward kernel)."""
    slots = {name: k for k, name in enumerate(kernel.arrays)}
    return Plan(kernel, slots, tuple(kernel.arrays.values()))


def curvature3d(tile: int) -> Kernel:
    """Kernel P's Curvature3D (``tv.cu``, ``tv_p``): a tile x tile plane of the
    block marches along the slowest axis; per plane it loads the next plane (S0),
    takes forward differences (S1), their norm (S2), the normalised gradient (S3),
    the divergence (S4), and writes P and carries the plane and the slow-axis
    normal to the next trip (S5). Every array is tile x tile floats."""
    size = 4 * tile * tile
    names = ("u_cur", "u_next", "g0", "g1", "g2", "nrm", "n0", "n1", "n2", "n0_prev", "div")
    stages = (
        Stage("S0 load", defines=("u_next",)),
        Stage("S1 differences", defines=("g0", "g1", "g2"), uses=("u_cur", "u_next")),
        Stage("S2 norm", defines=("nrm",), uses=("g0", "g1", "g2")),
        Stage("S3 normalise", defines=("n0", "n1", "n2"), uses=("g0", "g1", "g2", "nrm")),
        Stage("S4 divergence", defines=("div",), uses=("n0", "n1", "n2", "n0_prev")),
        Stage("S5 write, carry", defines=("u_cur", "n0_prev"), uses=("div", "u_next", "n0")),
    )
    return Kernel(f"curvature3d_{tile}", dict.fromkeys(names, size), stages, cyclic=True)


def curvature2d(tile: int) -> Kernel:
    """The Chan-Vese step's Curvature2D (``chanvese.cu``, ``cv_step``): load the
    level set (S0), differences (S1), norm (S2), normalised gradient (S3),
    divergence (S4), the update (S5). Every array is tile x tile floats."""
    size = 4 * tile * tile
    names = ("phi", "g0", "g1", "nrm", "n0", "n1", "div")
    stages = (
        Stage("S0 load", defines=("phi",)),
        Stage("S1 differences", defines=("g0", "g1"), uses=("phi",)),
        Stage("S2 norm", defines=("nrm",), uses=("g0", "g1")),
        Stage("S3 normalise", defines=("n0", "n1"), uses=("g0", "g1", "nrm")),
        Stage("S4 divergence", defines=("div",), uses=("n0", "n1")),
        Stage("S5 update", uses=("div",)),
    )
    return Kernel(f"curvature2d_{tile}", dict.fromkeys(names, size), stages)


def registration(rows: int = 16, cols: int = 24, halo: int = 2, reordered: bool = False) -> Kernel:
    """The registration benchmark's shared arrays as §5.3.1 describes them (no code or
    stencil is printed, and the benchmark is not built here): a block of rows x cols
    threads (16 x 24 is its preferred size) holds the vertical and the horizontal
    displacement, each with a halo of ``halo`` for the neighbours a pixel's update reads,
    and an iteration updates the vertical displacement (S0), then the horizontal (S1),
    each from both displacements of the previous iteration, so both are alive at both
    stages and no colouring shares them (Table 7's 0 %). ``reordered`` is one order §5.3.2
    alludes to ("by changing the order of computations"): the vertical displacement is
    written back to global memory before the horizontal one is loaded (S0 loads and
    updates u, S1 v), so u and v are never alive together and share one partition."""
    size = 4 * (rows + 2 * halo) * (cols + 2 * halo)
    if reordered:
        stages = (
            Stage("S0 load u", defines=("u",)),
            Stage("S1 update u", uses=("u",)),
            Stage("S2 load v", defines=("v",)),
            Stage("S3 update v", uses=("v",)),
        )
        return Kernel(f"registration_reordered_{rows}x{cols}", {"u": size, "v": size}, stages)
    stages = (
        Stage("S0 update vertical", defines=("u",), uses=("u", "v")),
        Stage("S1 update horizontal", defines=("v",), uses=("u", "v")),
    )
    return Kernel(f"registration_{rows}x{cols}", {"u": size, "v": size}, stages, cyclic=True)
