"""Real-browser checks: JupyterLab in Debian's Chromium shows widgets and outputs (issue 6).

The harness (server, browser, ``lab`` helpers) lives in ``conftest.py``. Run only these with
``pytest -m browser``; ``make test`` runs them with everything else.
"""

from __future__ import annotations

import pytest
from labharness import LabPage

pytestmark = pytest.mark.browser


def test_widget_and_print_render_in_jupyterlab(lab: LabPage) -> None:
    """The harness itself: a widget view and a print appear in the output area after Run All."""
    path = lab.server.add_notebook(
        "harness_smoke.ipynb",
        [
            "import ipywidgets as widgets\n"
            "slider = widgets.IntSlider(value=7, min=0, max=10, description='answer')\n"
            "print('hello from the kernel', 6 * 7)\n"
            "slider",
        ],
    )
    lab.open_notebook(path)
    lab.screenshot("opened")
    lab.run_all()

    out = lab.outputs(0)
    stdout = out.and_(lab.page.locator("[data-mime-type='application/vnd.jupyter.stdout']"))
    stdout.wait_for(state="visible")
    assert "hello from the kernel 42" in stdout.inner_text()

    slider = out.locator(".widget-slider")
    slider.wait_for(state="visible")
    assert "answer" in slider.inner_text()
    assert slider.locator(".widget-readout").inner_text().strip() == "7"
    lab.screenshot("ran")
    assert not lab.dialogs, lab.dialogs
