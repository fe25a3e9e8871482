#!/usr/bin/env python3
"""`make lint`'s unused-dependency check: every dependency a workspace member declares (normal,
dev or build) is named somewhere in that member's Rust sources, as `name::`, `use name` or
`extern crate name`. The same rule cargo-machete applies, read from the manifests and sources
directly: no tool to build first, and it runs in well under a second.

A dependency declared only for the features it turns on elsewhere would be reported; list it in
the member's `[package.metadata.unused-deps] declared-for-features` with the reason beside it.

Exit status 1 and one line per finding when any dependency is unused, 0 otherwise.
"""

import pathlib
import re
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
SKIPPED_DIRS = {"target", "node_modules", ".data"}
SECTIONS = ("dependencies", "dev-dependencies", "build-dependencies")


def members() -> list[pathlib.Path]:
    workspace = tomllib.loads((ROOT / "Cargo.toml").read_text())["workspace"]
    found = []
    for pattern in workspace["members"]:
        found.extend(path for path in sorted(ROOT.glob(pattern)) if (path / "Cargo.toml").is_file())
    return found


def declared(manifest: dict) -> set[str]:
    names = set()
    tables = [manifest] + list(manifest.get("target", {}).values())
    for table in tables:
        for section in SECTIONS:
            names.update(table.get(section, {}).keys())
    return names


def sources(member: pathlib.Path) -> str:
    texts = []
    for path in member.rglob("*.rs"):
        relative = path.relative_to(member).parts
        if not SKIPPED_DIRS.intersection(relative):
            texts.append(path.read_text(errors="replace"))
    return "\n".join(texts)


def unused_in(member: pathlib.Path) -> list[str]:
    manifest = tomllib.loads((member / "Cargo.toml").read_text())
    allowed = set(
        manifest.get("package", {})
        .get("metadata", {})
        .get("unused-deps", {})
        .get("declared-for-features", [])
    )
    text = sources(member)
    unused = []
    for name in sorted(declared(manifest) - allowed):
        ident = re.escape(name.replace("-", "_"))
        used = re.compile(rf"\b{ident}::|\buse\s+{ident}\b|\bextern\s+crate\s+{ident}\b")
        if not used.search(text):
            unused.append(name)
    return unused


def main() -> int:
    findings = [
        f"{member.relative_to(ROOT)}: {name} is declared but never used"
        for member in members()
        for name in unused_in(member)
    ]
    for finding in findings:
        print(f"unused-deps: {finding}", file=sys.stderr)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
