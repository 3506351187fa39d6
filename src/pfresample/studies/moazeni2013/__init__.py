"""Moazeni (2013), "Parallel Algorithms for Medical Informatics on
Data-Parallel Many-Core Processors" (UCLA PhD thesis): the fifth study.

* ``dp``: chapter 3, non-serial polyadic dynamic programming -- the
  recurrence of eqs. 1-2, the blocked operations of eqs. 4-5 and the two
  decompositions (bottom-up, divide and conquer) with Table 1's call counts,
  the CPU references of the GPU kernels.
"""
