"""The claims tables: every number a study page quotes is re-derived from its committed
evidence to the digits quoted, and every verdict on a page cites its claim. Each check has
a planted failure beside it (a stale number, an uncited verdict) that must be caught."""

from __future__ import annotations

import pandas as pd
import pytest

from pfresample_studies.pipeline import claims

PRESENT = [s for s in claims.STUDIES if claims.table_path(s).is_file()]


def row(**cells) -> pd.Series:
    base = dict.fromkeys(claims.COLUMNS, "")
    base.update(id="d3_2014.x", verdict="reproduced", statistic="exact")
    base.update(cells)
    return pd.Series(base)


@pytest.fixture
def repo(tmp_path):
    pd.DataFrame(
        {
            "n": [1024, 1024, 4096],
            "tpb": [32, 64, 32],
            "cpu_s": [2.0, 3.0, 9.5],
            "gpu_s": [0.5, 0.4, 0.2],
        }
    ).to_csv(tmp_path / "t.csv", index=False)
    return tmp_path


def test_quoted_numbers_parse_with_their_decimals():
    parsed = claims.parse_quoted("−0.745 [-0.906, 1,417.5]; 0.052–0.079 at 3×")
    assert [(q.value, q.decimals) for q in parsed] == [
        (-0.745, 3), (-0.906, 3), (1417.5, 1), (0.052, 3), (0.079, 3), (3.0, 0),
    ]  # fmt: skip
    assert claims.Quoted(2.39, 2).matches(2.3949) and not claims.Quoted(2.39, 2).matches(2.396)
    assert claims.Quoted(2.68, 2).matches(2.675)  # half up, whatever its binary form


def test_derive_by_rows_column_and_reduce(repo):
    one = row(evidence="t.csv", rows="n == 4096", column="cpu_s / gpu_s", reduce="value")
    assert claims.derive(one, repo) == [47.5]
    spread = row(evidence="t.csv", rows="n == 1024", column="cpu_s", reduce="range")
    assert claims.derive(spread, repo) == [2.0, 3.0]
    both = row(evidence="t.csv", rows="tpb == 32", column="cpu_s;gpu_s", reduce="median")
    assert claims.derive(both, repo) == [5.75, 0.35]
    with pytest.raises(ValueError, match="one row"):
        claims.derive(row(evidence="t.csv", column="cpu_s", reduce="value"), repo)
    with pytest.raises(ValueError, match="select nothing"):
        claims.derive(row(evidence="t.csv", rows="n == 7", column="cpu_s", reduce="max"), repo)


def test_a_stale_number_a_bad_verdict_and_a_missing_file_are_caught(repo):
    good = row(id="d3_2014.ok", quoted="47.5", evidence="t.csv", rows="n == 4096",
               column="cpu_s / gpu_s", reduce="value")  # fmt: skip
    stale = pd.concat([good, pd.Series({"id": "d3_2014.stale", "quoted": "47.6"})])
    verdict = pd.concat([good, pd.Series({"id": "d3_2014.verdict", "verdict": "agrees"})])
    missing = pd.concat([good, pd.Series({"id": "d3_2014.missing", "evidence": "gone.csv"})])
    frame = pd.DataFrame(
        [r[~r.index.duplicated(keep="last")] for r in (good, stale, verdict, missing)]
    )
    found = claims.problems("d3_2014", frame, repo)
    assert len(found) == 3, found
    assert any("d3_2014.stale" in p and "47.6" in p for p in found)
    assert any("d3_2014.verdict" in p for p in found)
    assert any("gone.csv" in p for p in found)
    assert claims.problems("d3_2014", pd.DataFrame([good]), repo) == []


def test_a_verdict_without_its_claim_is_caught():
    page = (
        "# Table 5\n\nThe ratio holds at every N [d3_2014.t5]. The kernel is better at "
        "2^20.\n\n| N | verdict |\n|---|---|\n| 1,024 | reproduced |\n"
        "| 4,096 | reproduced [d3_2014.t5] |\n\n- differs at 50,000\n\n"
        "```\nreproduced in a code block\n```\n"
    )
    assert claims.uncited_verdicts(page) == [
        "The kernel is better at 2^20.", "| 1,024 | reproduced |", "- differs at 50,000",
    ]  # fmt: skip
    frame = pd.DataFrame([row(id="d3_2014.t5"), row(id="d3_2014.unused")])
    found = claims.page_problems("d3_2014", page.replace("[d3_2014.t5]", "[d3_2014.t6]", 1), frame)
    assert any("[d3_2014.t6]" in p for p in found)
    assert any("d3_2014.unused is never cited" in p for p in found)


@pytest.mark.parametrize("study", PRESENT)
def test_every_quoted_number_is_re_derived_from_its_evidence(study):
    assert claims.problems(study) == []


@pytest.mark.parametrize("study", PRESENT)
def test_every_verdict_on_the_page_cites_its_claim(study):
    assert claims.page_problems(study) == []


@pytest.mark.parametrize("study", PRESENT)
def test_a_planted_stale_number_in_the_real_table_fails(study):
    frame = claims.load(study)
    quoting = frame[[bool(claims.parse_quoted(q)) for q in frame["quoted"]]]
    assert not quoting.empty, f"{study}: no claim quotes a number"
    planted = frame.copy()
    first = quoting.index[0]
    planted.at[first, "quoted"] = claims.NUMBER.sub(shift, planted.at[first, "quoted"])
    assert any(frame.at[first, "id"] in p for p in claims.problems(study, planted))


def shift(match) -> str:
    """A quoted number moved by 7 units of its last decimal: stale at the digits quoted."""
    q = claims.parse_quoted(match.group(0))[0]
    return f"{q.value + 7 * 10.0**-q.decimals:.{q.decimals}f}"


def test_every_study_has_its_claims_table():
    assert PRESENT == list(claims.STUDIES)
