#!/usr/bin/env python3
"""Moazeni (2013) Fig 63 timed end to end on one GPU host (MD-DTW's search from the query
to the ranked list, on the GPU and with the best CPU code on every core, stage by stage):
``pfresample_studies.moazeni2013.fig63_end_to_end``, the experiment of the pipeline's
target ``moazeni2013_ch7_fig63``.

    python bench/moazeni2013_fig63.py --out OUT            # the grid (~1.5 min on an H100 host)
    python bench/moazeni2013_fig63.py --out OUT --quick    # small cases
"""

from pfresample_studies.moazeni2013.fig63_end_to_end import main

if __name__ == "__main__":
    main()
