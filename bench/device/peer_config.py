#!/usr/bin/env python3
"""Write the Megopolis repository's config.json for one method at one N
(B = 354, eq. 2.33 y = 4, 32-weight segments, seed 1234, one weight
sequence), for the ncu probes bound_check.sh and c1_bound.sh.

    python bench/device/peer_config.py N METHOD CALLS DIR   (METHOD: our registry name)"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "peers"))
from megopolis_repo import peer_config  # noqa: E402 -- the bench folder's module

n, method, calls, folder = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
config = peer_config(n, 354, 4.0, calls, 1, 32, 1234, f"{folder}/", only=[method])
(folder / "config.json").write_text(json.dumps(config))
