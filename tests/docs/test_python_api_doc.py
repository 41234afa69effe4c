"""docs/python-api.md: its examples are Python that compiles, and use only names the
package exports."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import crawler

DOC = Path(__file__).parents[2] / "docs" / "python-api.md"


def test_the_examples_compile_and_name_what_the_package_exports() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    assert len(blocks) >= 4
    used = set()
    for block in blocks:
        tree = ast.parse(block)
        used |= {
            node.attr
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "crawler"
        }
    assert used <= set(crawler.__all__)
    assert {"crawl", "crawl_blocking", "stream_pages", "read_pages", "Page"} <= used
    for name in crawler.__all__:
        assert getattr(crawler, name) is not None
