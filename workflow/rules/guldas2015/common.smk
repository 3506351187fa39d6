"""Helpers of the Güldaş (2015) rules (single_step.smk): the artifact paths,
the cells each figure reads, the memory of each job. No rules live here; the
grids and their checks are Python (pfresample.studies.guldas2015.catalog)."""

from pfresample.studies.guldas2015 import catalog as guldas2015_catalog


def guldas2015_radix2_cell(n) -> str:
    return f"results/guldas2015/radix2/n{n}.npz"


def guldas2015_sweep_cell() -> str:
    return f"results/guldas2015/sweep/n{guldas2015_catalog.sweep_n(config)}.npz"


def guldas2015_speed_cell(target, n) -> str:
    return f"results/guldas2015/speed/{target}/n{n}.npz"


def guldas2015_speed_cells(target) -> list[str]:
    return [guldas2015_speed_cell(target, n) for n in guldas2015_catalog.speed_n(config)]


def guldas2015_table_inputs(plot) -> list[str]:
    """The cells one figure's table reads."""
    if plot == "fig4_1":
        return [guldas2015_radix2_cell(n) for n in guldas2015_catalog.histogram_n(config)]
    if plot == "fig4_2":
        return [guldas2015_radix2_cell(n) for n in guldas2015_catalog.radix2_n(config)]
    if plot in ("fig4_3", "fig4_4"):
        return [guldas2015_sweep_cell()]
    return guldas2015_speed_cells(guldas2015_catalog.SPEED_FIGURES[plot][0])


def guldas2015_outputs() -> list[str]:
    """Every figure (PNG, PDF) and tidy table (CSV) of the study."""
    out = ["results/tables/guldas2015/radix_timings.csv"]
    for plot in guldas2015_catalog.FIGURES:
        out.append(f"results/tables/guldas2015/{plot}.csv")
        out += [f"results/figures/guldas2015/{plot}.{ext}" for ext in ("png", "pdf")]
    return out


def guldas2015_artifacts() -> set[str]:
    """Every .npz artifact the study's targets read."""
    out = {guldas2015_radix2_cell(n) for n in guldas2015_catalog.radix2_n(config)}
    out.add(guldas2015_sweep_cell())
    for target in ("gaussian", "poisson"):
        out |= set(guldas2015_speed_cells(target))
    return out


def guldas2015_mem_mb(n, arrays=16) -> int:
    """Memory of a cell job at N: a few float64 arrays of length N (particles,
    log-weights, weights, ancestors and the resampler's temporaries)."""
    return 512 + math.ceil(arrays * 8 * int(n) / 2**20)


def guldas2015_cell_params() -> dict:
    return {"seed": config["seed"], "backend": config["backend"]}
