"""``--config key=[a,b]`` lists arrive as strings (Snakemake's YAML BaseLoader):
the keys each study lists in NUMBER_LIST_KEYS become numbers, integers where they
are integers, and anything else stays for the schema to name."""

from pfresample_studies.pipeline.config import coerce_number_lists


def test_number_lists_become_numbers():
    cfg = {"n": ["32", "-4", 64], "v": ["0.05", "1e-2"], "bad": ["x1"], "other": ["7"]}
    coerce_number_lists(cfg, ["n", "v", "bad"])
    assert cfg["n"] == [32, -4, 64] and all(type(v) is int for v in cfg["n"])
    assert cfg["v"] == [0.05, 0.01] and all(type(v) is float for v in cfg["v"])
    assert cfg["bad"] == ["x1"]  # left for the schema's error
    assert cfg["other"] == ["7"]  # not listed: untouched
