#!/usr/bin/env python3
"""The hexagonal dependency rules of the workspace, checked from `cargo metadata`.

Run from anywhere inside the project: `python3 scripts/layering.py` (`make lint` does). It prints
each violation and a last line `layering: N violations, M workspace crates`; the exit status is 0
with no violation, 1 with some, 2 when the check itself cannot run.

Rules, by crate folder ("depends" means normal dependencies, dev-dependencies are free):
  crates/domain     no workspace crate, and no IO crate anywhere below it
  pure libraries    (crates/text-mining, crates/standard-webhooks) no workspace crate but other
                    pure libraries, and no IO crate anywhere below them
  crates/ports      crates/domain only; no IO crate below it but tokio
  crates/app        crates/domain, crates/ports and the pure libraries only; no IO crate below it
                    but tokio
  crates/api-types  crates/domain only; no IO crate below it
  crates/edge       crates/domain, crates/ports, crates/app, crates/api-types and the pure
                    libraries only; no database, mail or chain driver anywhere below it: what
                    every way in shares (refusals, the body read, the SSE writer)
  crates/http       no adapter and no database, mail or chain driver anywhere below it
  crates/mcp,       (transports beside HTTP: MCP, the operator console) crates/domain,
  crates/console    crates/ports, crates/app, crates/api-types, crates/edge and the pure
                    libraries only, so never crates/http, an adapter or the composition root; no
                    database, mail or chain driver anywhere below them
  adapters          (crates/postgres, email, sms, evm, passkeys) crates/domain, crates/ports and
                    the pure libraries only, so never each other, the use cases or the transport
  outbound          (crates/webhook-delivery) crates/domain, crates/ports, crates/api-types and
                    the pure libraries only: it speaks to the outside as an adapter does, in the
                    API's own shapes, so never an adapter, the use cases or the composition root
  crates/runtime    the composition root: no other library crate depends on it
  test support      (crates/test-support) only as a dev-dependency
  bins/*, crates/runtime and tests/ are the only crates where an adapter and the transport meet.
"""
import json
import os
import subprocess
import sys

IO_CRATES = {
    "actix-web", "alloy-provider", "alloy-transport-http", "async-std", "deadpool", "diesel",
    "diesel-async", "hyper", "hyper-util", "lettre", "mio", "postgres", "redis", "reqwest",
    "smol", "sqlx", "tokio", "tokio-postgres", "ureq",
}
DRIVER_CRATES = {
    "alloy-provider", "alloy-transport-http", "deadpool", "diesel", "diesel-async", "lettre",
    "postgres", "redis", "sqlx", "tokio-postgres",
}
ADAPTERS = ("crates/postgres", "crates/email", "crates/sms", "crates/evm", "crates/passkeys")
PURE_LIBRARIES = ("crates/text-mining", "crates/standard-webhooks")
OUTBOUND = ("crates/webhook-delivery",)
EDGE = "crates/edge"
TRANSPORTS = ("crates/mcp", "crates/console")
REQUIRED = ("crates/domain", "crates/ports", "crates/app", "crates/http", *ADAPTERS,
            *PURE_LIBRARIES, *OUTBOUND, EDGE, *TRANSPORTS)
COMPOSITION = "crates/runtime"
TEST_SUPPORT = "crates/test-support"


def metadata():
    try:
        result = subprocess.run(["cargo", "metadata", "--format-version", "1", "--locked"],
                                capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as error:
        detail = getattr(error, "stderr", "") or str(error)
        print(f"layering: cannot read the workspace with `cargo metadata`: {detail.strip()}",
              file=sys.stderr)
        sys.exit(2)
    return json.loads(result.stdout)


class Workspace:
    def __init__(self, meta):
        self.root = meta["workspace_root"]
        self.members = set(meta["workspace_members"])
        self.packages = {p["id"]: p for p in meta["packages"]}
        self.nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
        self.by_folder = {self.folder(pid): pid for pid in self.members}

    def folder(self, pid):
        manifest = self.packages[pid]["manifest_path"]
        return os.path.relpath(os.path.dirname(manifest), self.root)

    def name(self, pid):
        return self.packages[pid]["name"]

    def direct(self, pid):
        """Normal (non-dev, non-build) dependencies of a package."""
        return [d["pkg"] for d in self.nodes[pid]["deps"]
                if any(kind["kind"] is None for kind in d["dep_kinds"])]

    def closure(self, pid):
        seen, stack = set(), [pid]
        while stack:
            for dep in self.direct(stack.pop()):
                if dep not in seen:
                    seen.add(dep)
                    stack.append(dep)
        return seen

    def workspace_direct(self, pid):
        return sorted(self.folder(d) for d in self.direct(pid) if d in self.members)

    def workspace_closure(self, pid):
        return {self.folder(d) for d in self.closure(pid) if d in self.members}

    def external_closure(self, pid):
        return {self.name(d) for d in self.closure(pid) if d not in self.members}


def check(ws):
    violations = []
    present = lambda folder: folder in ws.by_folder  # noqa: E731
    for folder in REQUIRED:
        if not present(folder):
            violations.append(f"missing crate folder {folder}")

    def only(folder, allowed):
        if present(folder):
            for dep in ws.workspace_direct(ws.by_folder[folder]):
                if dep not in allowed:
                    violations.append(f"{folder} depends on {dep}")

    def no_io(folder, io):
        if present(folder):
            pulled = sorted(ws.external_closure(ws.by_folder[folder]) & io)
            if pulled:
                violations.append(f"{folder} pulls IO crates: {', '.join(pulled)}")

    only("crates/domain", ())
    no_io("crates/domain", IO_CRATES)
    for library in PURE_LIBRARIES:
        only(library, PURE_LIBRARIES)
        no_io(library, IO_CRATES)
    only("crates/ports", ("crates/domain",))
    no_io("crates/ports", IO_CRATES - {"tokio"})
    only("crates/app", ("crates/domain", "crates/ports", *PURE_LIBRARIES))
    no_io("crates/app", IO_CRATES - {"tokio"})
    only("crates/api-types", ("crates/domain",))
    no_io("crates/api-types", IO_CRATES)
    for adapter in ADAPTERS:
        only(adapter, ("crates/domain", "crates/ports", *PURE_LIBRARIES))
    for outbound in OUTBOUND:
        only(outbound, ("crates/domain", "crates/ports", "crates/api-types", *PURE_LIBRARIES))
    use_cases = ("crates/domain", "crates/ports", "crates/app", "crates/api-types", *PURE_LIBRARIES)
    only(EDGE, use_cases)
    for transport in TRANSPORTS:
        only(transport, (*use_cases, EDGE))
    for way_in in (EDGE, *TRANSPORTS):
        if present(way_in):
            drivers = sorted(ws.external_closure(ws.by_folder[way_in]) & DRIVER_CRATES)
            if drivers:
                violations.append(f"{way_in} pulls driver crates: {', '.join(drivers)}")
    if present("crates/http"):
        http = ws.by_folder["crates/http"]
        for dep in sorted(ws.workspace_closure(http) & set(ADAPTERS)):
            violations.append(f"crates/http depends on adapter {dep}")
        drivers = sorted(ws.external_closure(http) & DRIVER_CRATES)
        if drivers:
            violations.append(f"crates/http pulls driver crates: {', '.join(drivers)}")

    for pid in sorted(ws.members, key=ws.folder):
        folder = ws.folder(pid)
        below = ws.workspace_closure(pid)
        if present(COMPOSITION) and COMPOSITION in below and not folder.startswith(("bins/", "tests")):
            violations.append(f"{folder} depends on the composition root {COMPOSITION}")
        if TEST_SUPPORT in below:
            violations.append(f"{folder} depends on {TEST_SUPPORT} outside dev-dependencies")
        meets = "crates/http" in below and below & set(ADAPTERS)
        wiring_place = folder.startswith(("bins/", "tests")) or folder == COMPOSITION
        if meets and not wiring_place:
            violations.append(f"{folder} wires adapters to the transport; only bins/* and "
                              f"{COMPOSITION} may")
    return violations


def main():
    workspace = Workspace(metadata())
    violations = check(workspace)
    for violation in violations:
        print(violation)
    print(f"layering: {len(violations)} violations, {len(workspace.members)} workspace crates")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
