#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""
A man page (roff, man macros) from one of our Markdown pages, so that the page and the
document are one source (docs/man/*.md, docs/configuration.md). It knows the Markdown
our docs use and no more: headings, paragraphs, lists, tables, fenced code, inline
code, bold, italics and links.

Usage: md2man.py [--version V] [--name N --section S --what TEXT] SRC.md OUT
A page whose first line is `# name(section) -- what it is` needs no --name/--section.
"""
import argparse
import pathlib
import re
import sys

TITLE = re.compile(r"^# (\S+)\((\d)\) -- (.+)$")


def escape(text, code=False):
    """Roff-safe text. A dash of code, or one that starts an option in prose (--json),
    is a minus sign that copies and pastes as one; a hyphen inside a word stays one."""
    text = text.replace("\\", "\\e")
    if code:
        return text.replace("-", "\\-")
    return re.sub(r"(?:(?<=^)|(?<=[\s(\[|/]))-+", lambda m: "\\-" * len(m.group(0)), text)


def link(m):
    text, target = m.group(1), m.group(2)
    # A link to another document of ours names the file, which a man reader can open.
    # Installed, the documents are in share/doc/softefa (softefa(1), FILES).
    page = target.split("#")[0]
    if page.endswith(".md") and not page.startswith("http"):
        name = pathlib.PurePosixPath(page).name
        if text.strip("`") in (name, page):
            return name
        return f"{text} ({name})"
    return text


def inline(text):
    """Inline Markdown to roff fonts, code spans first so nothing inside them changes."""
    out, pos = [], 0
    for m in re.finditer(r"`([^`]+)`", text):
        out.append(prose(text[pos:m.start()]))
        out.append("\\fB" + escape(m.group(1), code=True) + "\\fR")
        pos = m.end()
    out.append(prose(text[pos:]))
    return "".join(out)


def prose(text):
    text = re.sub(r"\[([^\]]+)\]\(([^)]+)\)", link, text)
    text = escape(text)
    text = re.sub(r"\*\*(.+?)\*\*", r"\\fB\1\\fR", text)
    text = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\\fI\1\\fR", text)
    return text


def line_out(text):
    """One output line; a leading dot or quote would be read as a request."""
    return "\\&" + text if text[:1] in (".", "'") else text


# Headers of a last column that is the row's prose: it goes under the tag unlabelled.
PROSE = ("meaning", "what it does", "what it holds", "what", "where")


def table(rows):
    """A table as tagged paragraphs: the first cell the tag, the others under it, each
    labelled with its header but for a last column of prose."""
    cells = [[c.strip() for c in r.strip().strip("|").split("|")] for r in rows]
    head, body = cells[0], cells[2:]
    out = []
    for row in body:
        row = row + [""] * (len(head) - len(row))
        out += [".TP", line_out(inline(row[0]))]
        last = head[-1].strip().lower() in PROSE
        cols = list(zip(head[1:], row[1:]))
        labelled = [f"{inline(h)}: {inline(v)}" for h, v in (cols[:-1] if last else cols) if v]
        if labelled:
            out.append(line_out("; ".join(labelled) + "."))
        if last and row[-1]:
            out += [".br"] if labelled else []
            out.append(line_out(inline(row[-1])))
    return out


def convert(lines, name, section, what, version):
    # No hyphenation and a ragged right edge: names and options copy as written.
    out = [f'.TH {name.upper()} {section} "" "softefa {version}" "softefa manual"', ".nh",
           ".ad l", ".SH NAME", f"{escape(name, code=True)} \\- {escape(what)}"]
    para, i, started = [], 0, False

    def flush():
        if para:
            out.append(line_out(inline(" ".join(para))))
            para.clear()

    while i < len(lines):
        line = lines[i].rstrip()
        if line.startswith("<!--") and line.endswith("-->"):
            i += 1
            continue
        if line.startswith("# "):
            i += 1
            continue
        if not started and line:
            if not line.startswith("## "):
                out.append(".SH DESCRIPTION")
            started = True
        if line.startswith("```"):
            flush()
            j = i + 1
            out += [".PP", ".RS 4", ".nf"]
            while j < len(lines) and not lines[j].startswith("```"):
                out.append(line_out(escape(lines[j].rstrip())))
                j += 1
            out += [".fi", ".RE"]
            i = j + 1
            continue
        if line.startswith("## "):
            flush()
            out.append(".SH " + escape(line[3:].upper()))
        elif line.startswith("### "):
            flush()
            out.append(".SS " + escape(line[4:]))
        elif line.startswith("|"):
            flush()
            j = i
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            out += table(lines[i:j])
            i = j
            continue
        elif re.match(r"^(- |\d+\. )", line):
            flush()
            mark = "\\(bu" if line.startswith("- ") else line.split(".")[0] + "."
            para.append(re.sub(r"^(- |\d+\. )", "", line))
            out += [f".IP {mark} 4"]
        elif not line:
            flush()
            if started and not out[-1].startswith((".PP", ".SH", ".SS", ".IP")):
                out.append(".PP")
        else:
            para.append(line.strip())
        i += 1
    flush()
    # A paragraph break just before a heading or another break is none.
    out = [o for i, o in enumerate(out) if o != ".PP" or (i + 1 < len(out) and
           not out[i + 1].startswith((".SH", ".SS", ".PP", ".TP")))]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--version", default="")
    ap.add_argument("--name")
    ap.add_argument("--section")
    ap.add_argument("--what")
    ap.add_argument("src")
    ap.add_argument("out")
    a = ap.parse_args()
    lines = pathlib.Path(a.src).read_text().splitlines()
    m = TITLE.match(lines[0]) if lines else None
    name = a.name or (m and m.group(1))
    section = a.section or (m and m.group(2))
    what = a.what or (m and m.group(3))
    if not (name and section and what):
        sys.exit(f"md2man: {a.src}: no '# name(section) -- what' title and no --name/--section/--what")
    out = pathlib.Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(convert(lines, name, section, what, a.version))


if __name__ == "__main__":
    main()
