"""Every constant of the project lives here, with the place it comes from."""

from statistics import NormalDist

# A warp is 32 consecutive particles (thesis §2.2); warp-shared draws use the
# warp index as their stream (DESIGN.md, "Warps and s-segments").
WARP_SIZE = 32

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

# The five gamma weight distributions of Fig 2.3 as (shape, scale): the thesis
# shows them only as histograms, so these are our documented choice (DESIGN.md).
GAMMA_SHAPE_SCALE = ((1.0, 2.0), (2.0, 2.0), (3.0, 2.0), (5.0, 1.0), (9.0, 0.5))

# Eq. 2.33 with y = 0..4 (Figs 5.7-5.14, 6.2-6.4) and y = 3.5..4.5 step 0.1 (Fig 6.5).
EQ233_Y = (0.0, 1.0, 2.0, 3.0, 4.0)
EQ233_Y_SWEEP = tuple(round(3.5 + 0.1 * k, 1) for k in range(11))

# z such that P(|Z| <= z) = 0.99 for a standard normal: the thesis reports 99%
# confidence intervals (§5.1).
CONFIDENCE_LEVEL = 0.99

# The matching z_0.995 = 2.5758...: the half-width of a 99% interval is
# CONFIDENCE_Z standard errors (normal approximation; the filter tables' CIs,
# pfresample.filter_tables.runs_half_width).
CONFIDENCE_Z = NormalDist().inv_cdf(0.5 + CONFIDENCE_LEVEL / 2.0)
