"""Chapter 4's fair peers run (``bench/moazeni2013_ch4_peers.py``) read cell by cell, the
figures docs/moazeni2013.md quotes that ``peers.csv`` holds only row by row (no new
measurement). Writes ``peers_cells.csv`` beside the run's ``peers.csv``, a row a cell
(working set, key distribution, batch, mix, share of absent keys):

* every structure's median and the ends of its 95 % interval of the median, in µs
  (``<short>_us``, ``<short>_lo_us``, ``<short>_hi_us``; the short names in :data:`SHORT`);
* ``fastest`` and ``second`` (by median) and ``fastest_separated``: whether the fastest's
  interval lies wholly below the second's (a win the 11 batches resolve);
* ``ours`` / ``ours_us``: the fastest of our three GPU_PH hashes; ``peer`` / ``peer_us``:
  the fastest of the four peers;
* speed ratios (time of the other over time of the first; above 1, the first is faster):
  ``ours_over_peer``, ``ours_over_set`` (over cuco's ``static_set``, the like-for-like
  set), ``msb_over_lsb`` (DEK fed most significant byte first over least), ``msb_over_mix``,
  ``set_over_map`` (``static_set`` over ``static_map``), ``set_over_slab``;
* the same comparisons by the intervals: ``ours_vs_peer``, ``ours_vs_set``,
  ``msb_vs_mix``: ``faster`` (the first's interval wholly below the other's), ``slower``
  (wholly above) or ``overlap``.

    python -m pfresample_studies.moazeni2013.peers_tables evidence/<folder>/ch4_fair
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

SHORT = {
    "GPU_PH dek lsb": "dek_lsb",
    "GPU_PH dek msb": "dek_msb",
    "GPU_PH mix": "mix",
    "cuco static_set": "static_set",
    "cuco static_map": "static_map",
    "cuco dynamic_map": "dynamic_map",
    "SlabHash": "slab",
}
OURS = ("dek_lsb", "dek_msb", "mix")
CELL = ["set", "distribution", "batch", "mix", "absent"]


def versus(a_lo: float, a_hi: float, b_lo: float, b_hi: float) -> str:
    """Structure a against b by their medians' intervals: ``faster`` where a's lies wholly
    below b's, ``slower`` wholly above, else ``overlap``."""
    if a_hi < b_lo:
        return "faster"
    if a_lo > b_hi:
        return "slower"
    return "overlap"


def cells(peers: pd.DataFrame) -> pd.DataFrame:
    """A row a cell of a peers run (module docstring); every structure of :data:`SHORT`
    must be in every cell, each checked (``ok``)."""
    unknown = sorted(set(peers["structure"]) - set(SHORT))
    if unknown:
        raise ValueError(f"structures not known here: {unknown}")
    if not peers["ok"].astype(bool).all():
        bad = peers.loc[~peers["ok"].astype(bool), CELL + ["structure"]]
        raise ValueError(f"unchecked or failed rows:\n{bad}")
    rows = []
    for key, group in peers.groupby(CELL, sort=False):
        got = {SHORT[r.structure]: r for r in group.itertuples()}
        missing = sorted(set(SHORT.values()) - set(got))
        if missing or len(group) != len(SHORT):
            raise ValueError(f"cell {key}: structures missing or repeated ({missing})")
        row = dict(zip(CELL, key, strict=True))
        for short, r in got.items():
            row[f"{short}_us"] = r.seconds * 1e6
            row[f"{short}_lo_us"] = r.seconds_lo * 1e6
            row[f"{short}_hi_us"] = r.seconds_hi * 1e6
        order = sorted(got, key=lambda s: got[s].seconds)
        first, second = order[0], order[1]
        row["fastest"], row["second"] = first, second
        row["fastest_separated"] = bool(got[first].seconds_hi < got[second].seconds_lo)
        ours = min(OURS, key=lambda s: got[s].seconds)
        peer = min((s for s in got if s not in OURS), key=lambda s: got[s].seconds)
        row["ours"], row["ours_us"] = ours, got[ours].seconds * 1e6
        row["peer"], row["peer_us"] = peer, got[peer].seconds * 1e6

        def speed(a: str, b: str, got=got) -> float:  # b's time over a's: above 1, a is faster
            return got[b].seconds / got[a].seconds

        def by_interval(a: str, b: str, got=got) -> str:
            return versus(got[a].seconds_lo, got[a].seconds_hi, got[b].seconds_lo,
                          got[b].seconds_hi)  # fmt: skip

        row["ours_over_peer"] = speed(ours, peer)
        row["ours_over_set"] = speed(ours, "static_set")
        row["msb_over_lsb"] = speed("dek_msb", "dek_lsb")
        row["msb_over_mix"] = speed("dek_msb", "mix")
        row["set_over_map"] = speed("static_set", "static_map")
        row["set_over_slab"] = speed("static_set", "slab")
        row["ours_vs_peer"] = by_interval(ours, peer)
        row["ours_vs_set"] = by_interval(ours, "static_set")
        row["msb_vs_mix"] = by_interval("dek_msb", "mix")
        rows.append(row)
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("folder", type=Path, help="the run's folder, holding peers.csv")
    args = p.parse_args(argv)
    out = cells(pd.read_csv(args.folder / "peers.csv"))
    out.to_csv(args.folder / "peers_cells.csv", index=False, float_format="%.6g")
    print(f"wrote {args.folder / 'peers_cells.csv'} ({len(out)} cells)")


if __name__ == "__main__":
    main()
