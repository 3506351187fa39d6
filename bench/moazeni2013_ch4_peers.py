#!/usr/bin/env python3
"""Moazeni (2013) chapter 4 beside cuCollections and SlabHash on fair terms, in one run on
one device: ``pfresample_studies.moazeni2013.fair_peers``, the experiment of the pipeline's
target ``moazeni2013_ch4_peers``.

    python bench/moazeni2013_ch4_peers.py --cuco peers/cuCollections/target/cuco_hash \\
        --slab peers/SlabHash/target/slab_hash --out OUT
"""

from pfresample_studies.moazeni2013.fair_peers import main

if __name__ == "__main__":
    main()
