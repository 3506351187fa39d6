"""Every constant of the project lives here, with the place it comes from."""

from enum import IntEnum
from statistics import NormalDist

# A warp is 32 consecutive particles (thesis §2.2); warp-shared draws use the
# warp index as their stream (DESIGN.md, "Warps and s-segments").
WARP_SIZE = 32


class CandidateScope(IntEnum):
    """Where the Metropolis and Uphill families draw candidate j at each
    iteration (``resampling/lanes.py``; the kernels' template argument, same
    numbers in ``gpu_kernels/lanes.cuh``):

    * ``ARRAY``: anywhere in the array (Metropolis, Alg. 3.3; Uphill, Alg. 6.1);
    * ``FIXED_SEGMENT``: inside the one s-segment a warp draws before the loop
      (Metropolis-C1, Alg. 5.1; Uphill-C1, Alg. 6.3);
    * ``SEGMENT_PER_ITERATION``: inside an s-segment the warp draws anew at
      every iteration (Metropolis-C2, Alg. 5.2; Uphill-CA, Alg. 6.2).
    """

    ARRAY = 0
    FIXED_SEGMENT = 1
    SEGMENT_PER_ITERATION = 2


# One global-memory segment of the K40 is 128 bytes (thesis Table 2.1): the
# smallest s-segment, and the default for the coalesced variants.
DEFAULT_SEGMENT_BYTES = 128

# Metropolis B = ceil(log(eps) / log(1 - beta)) (Murray et al.): eps = 1/100 in
# the resampling experiments (§5.1, §6.5), 1/10 inside filters (§5.4).
EPSILON_RESAMPLING = 0.01
EPSILON_FILTER = 0.1

# The Uphill SSD table covers B = 0 ... 8191 ("a sufficiently large number",
# thesis §6.4).
UPHILL_B_MAX = 8191

# Ancestors are int32 (DESIGN.md, "Output"), which bounds N.
MAX_PARTICLES = 2**31 - 1

# The CPU kernels walk the particles in chunks of this many lanes so that the
# temporaries of one Philox block stay in the L2 cache (measured: a 2^15-lane
# chunk is about 4x faster per draw than a 2^20-lane array on a 2-core EPYC).
CPU_CHUNK = 1 << 16

# z such that P(|Z| <= z) = 0.99 for a standard normal: the thesis reports 99%
# confidence intervals (§5.1).
CONFIDENCE_LEVEL = 0.99

# The matching z_0.995 = 2.5758...: the half-width of a 99% interval is
# CONFIDENCE_Z standard errors (normal approximation; the filter tables' CIs,
# studies/dulger2017/filter_tables.runs_half_width).
CONFIDENCE_Z = NormalDist().inv_cdf(0.5 + CONFIDENCE_LEVEL / 2.0)

# Butterfly resampling (Güldaş 2015): the default radix sequence has depth
# ceil(log_1024 N), r_max = 1024 being the most threads of a CUDA block
# (§4.1.4, §4.2.1).
BUTTERFLY_MAX_RADIX = 1024

# A butterfly segment of r values is summed in this many runs of ceil(r / 32)
# consecutive values (resampling/butterfly.py, step 2): one warp a segment on
# the device, one run a lane (gpu_kernels/butterfly.cu repeats it).
BUTTERFLY_RUNS = 32

# Cellular resampling (Gelencsér-Horváth et al. 2013): the neighbourhood radius
# r when none is given, the middle of the paper's grid {32, 64, 128, 256}
# (capped at N - 1).
CELLULAR_DEFAULT_RADIUS = 128

# D3's threads per block when none is given (d3.cu takes any size from 1 to 1024).
# With the project's strides (cdf "prefix", "local") one thread a slot and no
# block-level cooperation, so the particles never depend on it; the paper's GPU
# search (cdf "paper", Figs 8-9) draws one u1 a block, so its thresholds do, and
# its CPU reference takes the same number. 256: whole warps, the size of the
# project's other one-thread-a-particle kernels, and inside the paper's Table 6
# sweep (160 ... 736, step 36) that the d3_2014 study times.
D3_THREADS = 256
