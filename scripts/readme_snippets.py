#!/usr/bin/env python3
"""Writes every Swift snippet of README.md into Tests/WattleTests/ReadmeSnippets.swift."""
import pathlib
import re

root = pathlib.Path(__file__).resolve().parent.parent
readme = (root / "README.md").read_text()
blocks = [b for b in re.findall(r"```swift\n(.*?)```", readme, re.S) if not b.lstrip().startswith(".package(")]
out = [
    "// Every Swift snippet of README.md, compiled. ReadmeSnippetTests checks this file holds",
    "// each snippet verbatim, so the README cannot drift from code that builds.",
    "// Regenerate with: make readme-snippets",
    "// swift-format-ignore-file",
    "import Foundation",
    "",
]
for block in blocks:
    out.append(block.rstrip("\n"))
    out.append("")
(root / "Tests/WattleTests/ReadmeSnippets.swift").write_text("\n".join(out))
