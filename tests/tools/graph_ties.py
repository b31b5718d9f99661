#!/usr/bin/env python3
"""graph_ties.py — a perf report --stdio text with the sibling branches of its
call graphs that have the same percentage put in one canonical order.

perf orders a node's children by their hits, and children of equal hits in
the order its tree of children met them. That tree compares resolved frames
by name and unresolved ones by dso and address, which is no order once both
kinds sit under one node (a stripped program's garbage frames beside named
ones), so the order of such tied siblings follows the samples' arrival
(docs/compat/report.md). This tool lets a test compare everything else
exactly: every line, every number, every branch's contents, and the order of
branches of different percentages (the separator lines, made of "|" alone,
are left out: where they fall follows the order).

Usage: graph_ties.py < report.txt > canonical.txt
A branch starts at column c with "|--P%--" or " --P%--"; it runs to the next
branch start at the same column. The connector column (which reads "|" for
all but the last sibling) is masked, each branch's own sub-branches are made
canonical first, then runs of adjacent siblings with the same P are sorted.
"""
import re
import sys

ENTRY = re.compile(r"^ +[0-9.]+%")
BRANCH = re.compile(r"[| ]--[0-9.]+%--")


def branch_col(line, start):
    """the columns >= start where a branch starts on this line"""
    return [m.start() for m in BRANCH.finditer(line) if m.start() >= start]


def pct_of(line, col):
    return line[col + 3:].split("%", 1)[0]


def mask(line, col):
    return line[:col] + "#" + line[col + 1:] if len(line) > col else line


def canon(lines, start):
    """lines: a region of a graph; returns it with tied siblings sorted"""
    cols = [c for l in lines for c in branch_col(l, start)]
    if not cols:
        return lines
    col = min(cols)
    head, branches = [], []
    for l in lines:
        if col in branch_col(l, col):
            branches.append([l])
        elif branches:
            branches[-1].append(l)
        else:
            head.append(l)
    done = []
    for b in branches:
        first = mask(b[0], col)
        rest = canon([mask(l, col) for l in b[1:]], col + 1)
        done.append((pct_of(b[0], col), [first] + rest))
    out = list(head)
    i = 0
    while i < len(done):
        j = i
        while j < len(done) and done[j][0] == done[i][0]:
            j += 1
        for _, b in sorted(done[i:j], key=lambda x: "\n".join(x[1])):
            out.extend(b)
        i = j
    return out


def canon_graph(graph):
    """a graph's lines, its trailing empty lines (which end it) kept last"""
    n = len(graph)
    while n and not graph[n - 1].strip():
        n -= 1
    return canon(graph[:n], 0) + graph[n:]


def main():
    lines = sys.stdin.read().split("\n")
    out, graph = [], []
    for l in lines:
        if ENTRY.match(l) or l.startswith("#"):
            out.extend(canon_graph(graph))
            graph = []
            out.append(l)
        else:
            graph.append(l)
    out.extend(canon_graph(graph))
    # the separator lines ("|" and blanks) draw where a branch ends, which
    # moves with the order: left out
    sys.stdout.write("\n".join(l for l in out if l.strip(" |#") or not l.strip()) + "\n")


if __name__ == "__main__":
    main()
