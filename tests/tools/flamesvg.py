#!/usr/bin/env python3
"""flamesvg.py — read the frames of a flame graph SVG (flamegraph.pl's or
proff's: one <g> per frame with <title>NAME (N samples, P%[; D%])</title>
and a <rect>), and give each frame its call path from the geometry (a
frame's parent is the frame one level below whose x range holds its
centre), independently of how either tool built it.

    flamesvg.py paths SVG      "path<TAB>samples" per call path, sorted
                               (frames of one path summed: flamegraph.pl
                               splits a frame where the sorted stacks
                               interleave)
    flamesvg.py names SVG      JSON {name: {"self": N, "outer": N}}: a
                               name's self samples, and the samples of its
                               outermost frames (no ancestor of that name)
    flamesvg.py check SVG      the root is 100 %, each frame's percentage
                               is its samples over the root's, and no frame
                               has fewer samples than its children; prints
                               the problems, exit 1 if any
    flamesvg.py frames SVG     JSON list of frames: name, samples, pct,
                               delta, fill, class, x, y, w, path
"""
import json
import re
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
TITLE = re.compile(r"^(.*) \(([\d,]+) (\S+), ([\d.]+)%(?:; ([+-]?[\d.]+)%)?\)$")


def frames(path):
    root = ET.parse(path).getroot()
    out = []
    for g in root.iter(NS + "g"):
        t, r = g.find(NS + "title"), g.find(NS + "rect")
        if t is None or r is None:
            continue
        m = TITLE.match(t.text or "")
        if not m:
            raise SystemExit("%s: unexpected title %r" % (path, t.text))
        out.append({"name": m.group(1), "samples": int(m.group(2).replace(",", "")),
                    "unit": m.group(3), "pct": float(m.group(4)),
                    "delta": float(m.group(5)) if m.group(5) is not None else None,
                    "fill": r.get("fill"), "class": g.get("class") or "",
                    "x": float(r.get("x")), "y": float(r.get("y")), "w": float(r.get("width")),
                    "title": t.text})
    # levels: distinct y values; the root ("all") is the one with the
    # largest y in a flame (bottom-up) layout
    ys = sorted({f["y"] for f in out}, reverse=True)
    level = {y: i for i, y in enumerate(ys)}
    by_level = {}
    for i, f in enumerate(out):
        f["depth"] = level[f["y"]]
        by_level.setdefault(f["depth"], []).append(i)
    for d in sorted(by_level):
        for i in by_level[d]:
            f = out[i]
            if d == 0:
                f["parent"], f["path"] = None, f["name"]
                continue
            # the parent holds the frame's centre; coordinates are rounded
            # (0.1 px in flamegraph.pl's SVG), so a frame at a boundary
            # goes to the parent holding more of it
            cx = f["x"] + f["w"] / 2
            best, best_in = None, -1.0
            for j in by_level.get(d - 1, []):
                p = out[j]
                if p["x"] - 0.06 <= cx <= p["x"] + p["w"] + 0.06:
                    inside = min(f["x"] + f["w"], p["x"] + p["w"]) - max(f["x"], p["x"])
                    if inside > best_in:
                        best, best_in = j, inside
            if best is None:
                raise SystemExit("%s: frame %r has no parent" % (path, f["title"]))
            f["parent"] = best
            f["path"] = out[best]["path"] + ";" + f["name"]
    return out


def children_sum(fr):
    s = [0] * len(fr)
    for f in fr:
        if f["parent"] is not None:
            s[f["parent"]] += f["samples"]
    return s


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    cmd, path = sys.argv[1], sys.argv[2]
    fr = frames(path)
    if cmd == "paths":
        acc = {}
        for f in fr:
            acc[f["path"]] = acc.get(f["path"], 0) + f["samples"]
        for p in sorted(acc):
            print("%s\t%d" % (p, acc[p]))
    elif cmd == "names":
        kids = children_sum(fr)
        res = {}
        for i, f in enumerate(fr):
            r = res.setdefault(f["name"], {"self": 0, "outer": 0})
            r["self"] += f["samples"] - kids[i]
            a, outer = f["parent"], True
            while a is not None:
                if fr[a]["name"] == f["name"]:
                    outer = False
                    break
                a = fr[a]["parent"]
            if outer:
                r["outer"] += f["samples"]
        print(json.dumps(res, sort_keys=True))
    elif cmd == "check":
        kids = children_sum(fr)
        roots = [f for f in fr if f["parent"] is None]
        bad = []
        if len(roots) != 1 or roots[0]["pct"] != 100:
            bad.append("root: %r" % [f["title"] for f in roots])
        total = roots[0]["samples"] if roots else 0
        for i, f in enumerate(fr):
            if f["parent"] is None:
                continue
            want = "%.2f" % (100.0 * f["samples"] / total) if total else "0.00"
            if "%.2f" % f["pct"] != want:
                bad.append("%s: %s%%, samples say %s%%" % (f["title"], f["pct"], want))
            if kids[i] > f["samples"]:
                bad.append("%s: children have %d samples" % (f["title"], kids[i]))
        for b in bad:
            print(b)
        sys.exit(1 if bad else 0)
    elif cmd == "frames":
        print(json.dumps(fr))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
