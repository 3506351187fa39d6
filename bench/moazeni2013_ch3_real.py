#!/usr/bin/env python3
"""Moazeni (2013) chapter 3 on real instances on one GPU host (the 8,192-gon and the
8,191-matrix chain on the GPU and the best CPU code; with --chapter-cells the GPU cell from
n = 64 and Fig 12): ``pfresample_studies.moazeni2013.real_instances``, the experiment of
the pipeline's target ``moazeni2013_ch3_real``.

    python bench/moazeni2013_ch3_real.py --out OUT --chapter-cells
"""

from pfresample_studies.moazeni2013.real_instances import main

if __name__ == "__main__":
    main()
