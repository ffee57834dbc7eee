# SPDX-License-Identifier: MIT
"""
Every SOFTEFA_* variable the code reads is in docs/configuration.md, and every one the
page lists is read by the code; where the page gives a number for a default or a range,
it is the one in src/util/config.c's table. Usage: config_docs.py SOURCE_DIR
"""
import pathlib
import re
import sys

UNITS = {"": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def code_vars(root):
    """Names quoted in C sources: what getenv, setenv and the config table use."""
    names = {}
    for top in ("src", "tools"):
        for path in sorted((root / top).rglob("*.[ch]")):
            for m in re.finditer(r'"(SOFTEFA_[A-Z0-9_]*[A-Z0-9])"', path.read_text()):
                names.setdefault(m.group(1), str(path.relative_to(root)))
    return names


def c_number(text, macros):
    """The value of one of the table's constant expressions (or None)."""
    text = text.strip()
    if text == "UINT64_MAX":
        return (1 << 64) - 1
    if text in macros:
        return c_number(macros[text], {})
    m = re.fullmatch(r"(0x[0-9a-fA-F]+|\d+)[uUlL]*(?:\s*<<\s*(\d+))?", text)
    if not m:
        return None
    return int(m.group(1), 0) << int(m.group(2) or 0)


def table_rows(root):
    """{name: (default, min, max)} from the numeric rows of src/util/config.c."""
    text = (root / "src/util/config.c").read_text()
    macros = dict(re.findall(r"^#define (SEFA_\w+)\s+(\S+)$",
                             (root / "src/util/config.h").read_text(), re.M))
    rows = {}
    for m in re.finditer(r'\{"(SOFTEFA_\w+)", CFG\([^)]*\), ([^,]+), ([^,]+), ([^,]+),', text):
        rows[m.group(1)] = tuple(c_number(v, macros) for v in m.group(2, 3, 4))
    return rows


def doc_number(text):
    """A cell's value when it is a plain number with an optional binary unit."""
    m = re.fullmatch(r"(\d+)\s*(KiB|MiB|GiB)?", text.strip())
    return int(m.group(1)) * UNITS[m.group(2) or ""] if m else None


def doc_rows(root):
    """{name: [cells after the name]} for every table row naming variables."""
    rows = {}
    for line in (root / "docs/configuration.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("| `SOFTEFA_"):
            continue
        for name in re.findall(r"`(SOFTEFA_[A-Z0-9_]+)`", cells[0]):
            rows[name] = cells[1:]
    return rows


def check_numbers(name, cells, want, header_has_range):
    """Complaints where the page's default or range is a number other than the code's."""
    bad = []
    default, lo, hi = want
    got = doc_number(cells[0]) if cells else None
    if got is not None and got != default:
        bad.append(f"{name}: the page's default {cells[0]!r}, the code's {default}")
    if header_has_range and len(cells) > 1:
        parts = re.split(r"\s*[–-]\s*", cells[1])
        nums = [doc_number(p) for p in parts]
        if len(nums) == 2 and None not in nums and (nums[0], nums[1]) != (lo, hi):
            bad.append(f"{name}: the page's range {cells[1]!r}, the code's {lo}-{hi}")
    return bad


def main():
    root = pathlib.Path(sys.argv[1])
    code = code_vars(root)
    docs = doc_rows(root)
    table = table_rows(root)
    page = (root / "docs/configuration.md").read_text()
    bad = []
    for name, where in sorted(code.items()):
        if name not in docs:
            bad.append(f"{name} (read in {where}) is not in docs/configuration.md")
    for name in sorted(docs):
        if name not in code:
            bad.append(f"{name} is in docs/configuration.md but no code reads it")
    # Which tables have a range column: the header row before each variable's row.
    ranged, has_range = set(), False
    for line in page.splitlines():
        if line.startswith("| variable"):
            has_range = "| range |" in line
        for name in re.findall(r"^\| `(SOFTEFA_[A-Z0-9_]+)`", line):
            if has_range:
                ranged.add(name)
    for name, want in sorted(table.items()):
        if name in docs:
            bad += check_numbers(name, docs[name], want, name in ranged)
    if len(table) < 30 or len(code) < 40:
        bad.append(f"found only {len(table)} table rows and {len(code)} variables: "
                   "the patterns no longer match the code")
    for line in bad:
        print("config_docs:", line)
    print(f"config_docs: {len(code)} variables in the code, {len(docs)} on the page, "
          f"{len(table)} numeric rows compared, {len(bad)} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
