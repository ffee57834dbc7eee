#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Every command a ```sh block of README.md, docs/*.md or the man pages' sources
(docs/man/*.md) shows runs, each line on its own, with `build/` standing for the build
directory (and the man pages' bare `softefa` for build/bin/softefa), and exits 0 within
its time. A block that
cannot run here (benchmarks, other hosts, long studies, `make test` itself) is preceded by
`<!-- doc-examples: skip (why) -->`; one with no reason fails. A line's server waiting
for its client has no place in a runnable block. Usage: doc_examples.py SOURCE BUILD"""
import os
import re
import subprocess
import sys
import tempfile

SKIP = re.compile(r"<!-- doc-examples: skip \((.+)\) -->")
LINE_SECONDS = 120


def blocks(path):
    """(line number, skip reason or None, [command lines]) of each sh block."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out = []
    for i, line in enumerate(lines):
        if line.strip() != "```sh":
            continue
        j = i + 1
        body = []
        while j < len(lines) and lines[j].strip() != "```":
            body.append(lines[j])
            j += 1
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        m = SKIP.search(lines[k]) if k >= 0 else None
        bare = k >= 0 and "doc-examples: skip" in lines[k] and not m
        out.append((i + 1, "" if bare else (m.group(1) if m else None), body))
    return out


def main():
    src, build = sys.argv[1], os.path.abspath(sys.argv[2])
    files = [os.path.join(src, "README.md")] + [
        os.path.join(src, d, f) for d in ("docs", "docs/man")
        for f in sorted(os.listdir(os.path.join(src, d))) if f.endswith(".md")]
    bad = ran = skipped = 0
    with tempfile.TemporaryDirectory() as run_dir:
        env = dict(os.environ, SOFTEFA_RUN_DIR=os.path.join(run_dir, "run"),
                   PATH=os.path.join(build, "bin") + ":" + os.environ.get("PATH", ""))
        for f in files:
            name = os.path.relpath(f, src)
            for lineno, why, body in blocks(f):
                if why == "":
                    print(f"FAIL: {name}:{lineno}: a skip with no reason")
                    bad += 1
                    continue
                if why is not None:
                    print(f"skip: {name}:{lineno}: {why}")
                    skipped += 1
                    continue
                for cmd in body:
                    if not cmd.strip() or cmd.lstrip().startswith("#"):
                        continue
                    line = re.sub(r"(^|[\s\"'(])build/", r"\1" + build + "/", cmd)
                    try:
                        p = subprocess.run(["bash", "-c", line], cwd=src, env=env,
                                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                           timeout=LINE_SECONDS, text=True)
                        rc, err = p.returncode, p.stderr
                    except subprocess.TimeoutExpired:
                        rc, err = "timeout", f"still running after {LINE_SECONDS} s"
                    ran += 1
                    if rc != 0:
                        print(f"FAIL: {name}:{lineno}: `{cmd.strip()}` exited {rc}: "
                              f"{err.strip()[-400:]}")
                        bad += 1
                    else:
                        print(f"ok: {name}:{lineno}: {cmd.strip()}")
    print(f"doc_examples: {ran} commands ran, {skipped} blocks skipped, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
