"""The research notebooks (notebooks/research/) run top to bottom with small parameters,
against the session's store (30 simulated days: too short for a validation record or a
backtest, which each notebook must say in a sentence) and, where the shared NSE daily
files are present, on them (charts with titles). Every number a reader sees is formatted:
no raw float with four or more decimals, no 'nan'.

nbval does not run these notebooks (pyproject: --ignore=notebooks/research): with their
default parameters each takes about a minute; `make docs-research` runs them in full.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import papermill
import pytest

from reports.research import default_nse_path, nse_available

RESEARCH = Path(__file__).resolve().parents[2] / "notebooks" / "research"
NSE = default_nse_path()
HAVE_NSE = nse_available(NSE)
SMALL = {
    "model_diagnostics": {
        "importance_days": 10,
        "min_train_days": 20,
        "nse_history_days": 265,
        "nse_test_days": 10,
        "nse_min_train_days": 250,
        "window": 5,
    },
    "backtest": {
        "test_days": 10,
        "min_train_days": 120,
        "nse_history_days": 265,
        "nse_test_days": 10,
        "nse_min_train_days": 250,
    },
    "data_quality": {"nse_history_days": 300, "window": 5},
}
RAW_FLOAT = re.compile(r"(?<![\w.])-?\d+\.\d{4,}(?![\w.])")  # -0.0171: a fraction not shown as a percentage
RAW_LARGE = re.compile(r"(?<![\w.,:-])\d{5,}(?:\.\d+)?(?![\w.,:-])")  # 9830264.6: no thousands separators


def outputs(notebook: nbformat.NotebookNode) -> tuple[list[str], list[str]]:
    """What a reader sees: the text of every output (Markdown, HTML tables, plain text),
    and the plain-text names of the charts."""
    texts, charts = [], []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" in data:
                charts.append(data.get("text/plain", ""))
            elif output.get("output_type") == "error":
                texts.append(f"ERROR {output.get('ename')}: {output.get('evalue')}")
            else:
                texts.append(
                    data.get("text/markdown")
                    or data.get("text/html")
                    or data.get("text/plain")
                    or output.get("text", "")
                )
    return texts, charts


@pytest.mark.parametrize("name", sorted(SMALL))
def test_research_notebook_runs_and_shows_formatted_results(name: str, tmp_path: Path) -> None:
    assert sorted(p.stem for p in RESEARCH.glob("*.ipynb")) == sorted(SMALL), "every research notebook is tested"
    out = tmp_path / f"{name}.ipynb"
    papermill.execute_notebook(
        str(RESEARCH / f"{name}.ipynb"),
        str(out),
        kernel_name="python3",
        progress_bar=False,
        parameters={**SMALL[name], "nse_path": NSE if HAVE_NSE else "none"},
        cwd=str(RESEARCH),
    )
    texts, charts = outputs(nbformat.read(out, as_version=4))
    shown = "\n".join(texts)
    assert "ERROR" not in shown
    html_free = re.sub(r"<[^>]+>|#T_\w+|id=\"[^\"]*\"", " ", shown)
    assert not RAW_FLOAT.findall(html_free), RAW_FLOAT.findall(html_free)[:5]
    assert not RAW_LARGE.findall(html_free), RAW_LARGE.findall(html_free)[:5]
    assert not re.search(r"\bnan\b", html_free, re.I)
    if name == "model_diagnostics":
        assert "holds no validation record yet" in shown, "the store's empty record is explained"
    if name == "backtest":
        assert "No backtest: The SQLite store" in shown and "too short a history" in shown
    if name == "data_quality":
        assert re.search(r"end-of-day rows of \d+ instruments over [\d,]+ market days", shown)
        assert charts, "the store's zero-volume and stale-price chart"
    if HAVE_NSE:
        assert "No NSE daily files" not in shown
        assert len(charts) >= {"model_diagnostics": 5, "backtest": 1, "data_quality": 2}[name], charts
        assert all(re.fullmatch(r"<chart: .{10,}>", c) for c in charts), charts
        if name == "data_quality":  # the NSE files' copies of the session before, inside the window, are said
            assert (
                "the session before verbatim (a holiday or an unpublished day saved as a copy): **3** "
                "(2021-05-14, 2021-07-20, 2021-10-11)"
            ) in shown, shown[-3000:]
    else:
        assert "No NSE daily files at 'none'" in shown
