#!/usr/bin/python3
"""uftrace_tree.py — compare proff's execution tree with uftrace's call graph.

Usage: uftrace_tree.py UFTRACE_GRAPH PROFF_TREE [--strip-top NAME]

UFTRACE_GRAPH is the output of `uftrace graph --demangle=full` (one or more
sessions), PROFF_TREE that of `proff report -v -T` of the same program. Both
are turned into {call path: calls}: uftrace's root nodes (the program, one
per session) are dropped, so their children are the top-level paths, as
proff's roots are; paths that occur in several sessions, threads or graphs
add up. Names are compared as demangled with parameters, with gcc's clone
suffixes (" [clone .constprop.0]", ".isra.0", ...) removed on both sides.

--strip-top NAME drops the top-level function NAME from uftrace's paths (its
callees become top-level): uftrace refuses a program whose executable is not
instrumented, so proff's trace of such a program that dlopens an
instrumented library is compared with uftrace's of the instrumented build,
whose main is not in proff's.

Prints one line per differing path and exits 1 if any; prints the number of
paths and calls compared and exits 0 if the trees are equal.
"""
import re
import sys
from collections import defaultdict

CLONE = re.compile(r"( \[clone [^\]]*\])+$|(\.(constprop|isra|part|cold|lto_priv|localalias)(\.\d+)?)+$")


def norm(name):
    return CLONE.sub("", name.strip())


def parse_uftrace(text):
    """uftrace graph: "TIME UNIT : PREFIX(N) NAME". A node drawn with "+-"
    is a child of the last node whose "(" is 3 columns to its left; a node
    without "+-" continues a chain: the child of the node just above."""
    paths = defaultdict(int)
    node_re = re.compile(r"^([ |]*)(\+-)?\((\d+)\) (.*)$")
    last_at_col = {}   # column of "(" -> path of the last node drawn there
    prev = None
    for line in text.splitlines():
        if line.startswith("#") or line.startswith("="):
            if "Function Call Graph" in line:
                last_at_col, prev = {}, None
            continue
        if " : " not in line:
            continue
        right = line.split(" : ", 1)[1]
        m = node_re.match(right)
        if not m:
            continue
        col = len(m.group(1)) + (2 if m.group(2) else 0)
        calls, name = int(m.group(3)), norm(m.group(4))
        if prev is None:
            path = ()                      # the session's root: the program
        elif m.group(2):
            parent = last_at_col.get(col - 3)
            if parent is None:
                raise SystemExit("uftrace graph: no parent for line: " + line)
            path = parent + (name,)
        else:
            path = prev + (name,)
        if path:
            paths[path] += calls
        last_at_col[col] = path
        # deeper columns belong to the previous subtree
        for c in [c for c in last_at_col if c > col]:
            del last_at_col[c]
        prev = path
    return paths


def parse_proff(text):
    """proff report -T: "  TOTAL  SELF  CALLS  PREFIX+- NAME", the prefix
    3 columns per level ("|  " or "   "), no "+- " at the top level."""
    paths = defaultdict(int)
    stack = []
    node_re = re.compile(r"^([| ]*)\+- (.*)$")
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        calls = int(line[26:36])
        rest = line[38:]
        m = node_re.match(rest)
        if m:
            depth, name = len(m.group(1)) // 3 + 1, m.group(2)
        else:
            depth, name = 0, rest
        del stack[depth:]
        stack.append(norm(name))
        paths[tuple(stack)] += calls
    return paths


def main():
    uf = parse_uftrace(open(sys.argv[1]).read())
    pf = parse_proff(open(sys.argv[2]).read())
    if len(sys.argv) > 4 and sys.argv[3] == "--strip-top":
        top = sys.argv[4]
        stripped = defaultdict(int)
        for path, calls in uf.items():
            if path[0] == top:
                if len(path) > 1:
                    stripped[path[1:]] += calls
            else:
                stripped[path] += calls
        uf = stripped
    bad = 0
    for path in sorted(set(uf) | set(pf)):
        u, p = uf.get(path, 0), pf.get(path, 0)
        if u != p:
            bad += 1
            if bad <= 25:
                print("path %s: uftrace %d calls, proff %d" % (" > ".join(path), u, p))
    if bad:
        print("%d of %d paths differ" % (bad, len(set(uf) | set(pf))))
        return 1
    print("%d paths, %d calls: equal" % (len(pf), sum(pf.values())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
