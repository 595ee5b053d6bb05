"""Sphinx configuration: the nbagents docs site (Sphinx + myst-nb), built offline.

`make docs` runs ``sphinx-build -b html docs docs/_build/html``. Notebooks come from
``../notebooks`` through the ``docs/notebooks`` symlink and are rendered with their committed
outputs, never executed.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # autodoc imports the working tree even without `pip install -e .`

import nbagents  # noqa: E402

project = "nbagents"
author = "nbagents contributors"
copyright = "nbagents contributors"
release = nbagents.__version__
version = release

extensions = [
    "myst_nb",  # Markdown pages and .ipynb notebooks (also enables myst_parser)
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
exclude_patterns = [
    "_build",
    "jupyter_execute",
    "README.md",  # notes for maintainers of this site, not a page of it
    "**/.ipynb_checkpoints",
    "notebooks/README.md",
    "notebooks/skills/**",  # tutorial 10's skill folders: data the agent reads, not pages
]

# --- notebooks -----------------------------------------------------------------------------------
# Render what is committed: the outputs nbval checks are the outputs readers see.
nb_execution_mode = "off"
# The live view's output bundle holds the widget view *and* a self-contained text/html snapshot of
# the trace. A static site has no kernel to drive the widget: drop the view, show the snapshot.
nb_mime_priority_overrides = [
    ("*", "application/vnd.jupyter.widget-view+json", None),
]
# No widget manager JavaScript from a CDN: the site builds and reads offline.
nb_ipywidgets_js: dict[str, dict[str, str]] = {}
nb_merge_streams = True
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# --- API reference -------------------------------------------------------------------------------
autodoc_member_order = "bysource"
autodoc_typehints = "description"
# Methods overriding LangChain hooks would inherit LangChain's Markdown docstrings (not reST).
autodoc_inherit_docstrings = False
autodoc_default_options = {"members": True, "show-inheritance": True}
napoleon_google_docstring = True
napoleon_numpy_docstring = True

# --- HTML ----------------------------------------------------------------------------------------
html_theme = "furo"
html_title = f"nbagents {release}"
html_static_path: list[str] = []
