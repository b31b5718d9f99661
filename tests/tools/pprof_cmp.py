#!/usr/bin/env python3
"""pprof_cmp.py — compare `go tool pprof` text outputs with proff's, for
tests/oracle/pprof.sh. Prints one line per difference; exit 1 if any.

  pprof_cmp.py top TOP.txt PROFF.json [--self-only]
      `go tool pprof -top -nodecount=0 -nodefraction=0 -unit=U`: flat and cum
      per function against proff report --json -s sym rows (self_period and
      children_period summed by name). Functions pprof marks "(inline)" are
      compared under their name; one shown both ways is left out (pprof
      keeps the two apart, proff's model has one function). Unresolved
      frames (pprof "<unknown>", proff "0x...") are left out.
  pprof_cmp.py traces TRACES.txt FOLDED [--thread-prefix]
      `go tool pprof -traces -unit=U`: each trace's value summed per stack,
      against folded stacks (proff convert ... x.folded). Unknown frames
      ("<unknown>"; "[dso]" in folded) compare as "?", "_[k]" is dropped.
  pprof_cmp.py tags TAGS.txt KEY PROFF.json
      `go tool pprof -tags -unit=U`: the values of label KEY against proff
      report -s label:KEY --json (self_period per label value).
"""
import json
import re
import sys

NUM = re.compile(r'^(-?[0-9]+(?:\.[0-9]+)?)([A-Za-z]*)$')


def num(tok):
    m = NUM.match(tok)
    if not m:
        raise ValueError('not a number: %r' % tok)
    v = float(m.group(1))
    return int(round(v))


def parse_top(path):
    out, both = {}, set()
    forms = {}
    started = False
    for line in open(path):
        if not started:
            started = line.split()[:2] == ['flat', 'flat%']
            continue
        t = line.split(None, 5)
        if len(t) < 6:
            continue
        name = t[5].rstrip('\n')
        inline = name.endswith(' (inline)')
        if inline:
            name = name[:-len(' (inline)')]
        forms.setdefault(name, set()).add(inline)
        f, c = num(t[0]), num(t[3])
        of, oc = out.get(name, (0, 0))
        out[name] = (of + f, oc + c)
    for n, fs in forms.items():
        if len(fs) > 1:
            both.add(n)
    return out, both


def parse_proff(path, key='sym'):
    d = json.load(open(path))
    out = {}
    for row in d['events'][0]['rows']:
        name = row[key]
        s = row['self_period']
        c = row.get('children_period', s)
        os_, oc = out.get(name, (0, 0))
        out[name] = (os_ + s, oc + c)
    return out


def unknown(name):
    # pprof's unresolved frame (<unknown>, or "[MAPPING]" when its mapping has
    # a file name, as the vdso's "[vdso]": "[[vdso]]"); proff's address of one
    # ("%#018x": no 0x for 0)
    return (name == '<unknown>' or re.match(r'^\[.*\]$', name) is not None or
            re.match(r'^(0x[0-9a-f]+|0{18})$', name) is not None)


def cmd_top(args):
    top, both = parse_top(args[0])
    proff = parse_proff(args[1])
    self_only = '--self-only' in args
    bad = 0
    names = {n for n in top if not unknown(n)} | {n for n in proff if not unknown(n)}
    for n in sorted(names - both):
        a, b = top.get(n), proff.get(n)
        if a is None or b is None:
            # pprof shows every function with a value; proff every row
            print('%s: pprof %s, proff %s' % (n, a, b))
            bad += 1
            continue
        if (a[0], a[1]) != (b[0], b[1]) and not (self_only and a[0] == b[0]):
            print('%s: pprof flat %d cum %d, proff self %d children %d' % (n, a[0], a[1], b[0], b[1]))
            bad += 1
    print('%d functions compared, %d differ' % (len(names - both), bad))
    return 1 if bad or not names else 0


def norm_frame(f, folded):
    f = f.strip()
    if f.endswith(' (inline)'):
        f = f[:-len(' (inline)')]
    if folded:
        if f.endswith('_[k]'):
            f = f[:-4]
        if f.startswith('[') and f.endswith(']'):
            return '?'
    elif f == '<unknown>' or (f.startswith('[') and f.endswith(']')):
        return '?'
    return f


def parse_traces(path):
    out = {}
    frames, value, started = [], None, False

    def flush():
        if value is not None and frames:
            k = ';'.join(norm_frame(f, False) for f in reversed(frames))
            out[k] = out.get(k, 0) + value

    for line in open(path):
        line = line.rstrip('\n')
        if line.startswith('-----------+'):
            if started:
                flush()
            started, frames, value = True, [], None
            continue
        if not started or not line.strip():
            continue
        t = line.split()
        if value is None and t[0].endswith(':'):
            continue          # a label
        if value is None:
            value = num(t[0])
            frames.append(line.strip()[len(t[0]):].strip())
        else:
            frames.append(line.strip())
    flush()
    return out


def parse_folded(path, prefix):
    out = {}
    for line in open(path):
        line = line.rstrip('\n')
        if not line:
            continue
        stack, count = line.rsplit(' ', 1)
        fr = stack.split(';')
        if prefix:
            fr = fr[1:]
        k = ';'.join(norm_frame(f, True) for f in fr)
        out[k] = out.get(k, 0) + int(count)
    return out


def cmd_traces(args):
    a = parse_traces(args[0])
    b = parse_folded(args[1], '--thread-prefix' in args)
    bad = 0
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            print('stack %s: pprof %s, proff %s' % (k, a.get(k), b.get(k)))
            bad += 1
    print('%d stacks compared, %d differ' % (len(set(a) | set(b)), bad))
    return 1 if bad or not a else 0


def cmd_tags(args):
    path, key, pj = args
    tags, cur = {}, None
    for line in open(path):
        m = re.match(r'^\s*(\S+): Total', line)
        if m:
            cur = m.group(1)
            continue
        m = re.match(r'^\s*(\S+) \(\s*[0-9.]+%\): (.*)$', line)
        if m and cur == key:
            v = num(m.group(1))
            name = m.group(2)
            if re.match(r'^[0-9]+B$', name):
                name = name[:-1]      # a number with pprof's unit for a bytes key
            if v:
                tags[name] = tags.get(name, 0) + v
    rows = parse_proff(pj, 'label')
    # pprof's -tags leaves out the samples without the label
    got = {n: v[0] for n, v in rows.items() if n != '[none]'}
    bad = 0
    for n in sorted(set(tags) | set(got)):
        if tags.get(n) != got.get(n):
            print('%s=%s: pprof %s, proff %s' % (key, n, tags.get(n), got.get(n)))
            bad += 1
    print('%d values of %s compared, %d differ' % (len(set(tags) | set(got)), key, bad))
    return 1 if bad or not tags else 0


if __name__ == '__main__':
    cmds = {'top': cmd_top, 'traces': cmd_traces, 'tags': cmd_tags}
    if len(sys.argv) < 3 or sys.argv[1] not in cmds:
        sys.exit(__doc__)
    sys.exit(cmds[sys.argv[1]](sys.argv[2:]))
