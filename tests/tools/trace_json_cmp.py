#!/usr/bin/env python3
"""trace_json_cmp.py — checks of the timeline files proff convert writes for
exact traces (tests/oracle/chrome.sh). Prints one line per difference; exit
1 if any.

  trace_json_cmp.py structure A.json B.json
      Chrome trace event files: every thread's sequence of (B/E, name) is
      balanced, and the threads' sequences of A and B are the same (as a
      multiset: thread ids and times differ between runs). Threads without
      an explicit tid are the process's main thread (uftrace omits it).
  trace_json_cmp.py stats FILE.json PROFF.json
      A Chrome trace or a speedscope file against `proff report --json
      --no-children -s sym` of the same trace (raw times, --no-compensate):
      calls and inclusive time per function (every call's, recursive ones
      too: proff's avg_total_ns times calls) equal, time within 1 ns per
      call (the files round each event to the nanosecond).
"""
import json
import sys


def threads_chrome(path):
    d = json.load(open(path))
    th = {}
    for e in d['traceEvents']:
        if e.get('ph') not in ('B', 'E'):
            continue
        key = (e['pid'], e.get('tid', e['pid']))
        th.setdefault(key, []).append((e['ph'], e['name'], float(e['ts']) * 1000.0))
    return th


def threads_speedscope(path):
    d = json.load(open(path))
    frames = [f['name'] for f in d['shared']['frames']]
    th = {}
    for i, p in enumerate(d['profiles']):
        if p['type'] != 'evented' or p.get('unit') != 'nanoseconds':
            raise SystemExit('profile %d: not an evented profile in nanoseconds' % i)
        last = p['startValue']
        seq = []
        for e in p['events']:
            if e['at'] < last or e['at'] > p['endValue']:
                raise SystemExit('profile %d: event at %s out of order' % (i, e['at']))
            last = e['at']
            seq.append(('B' if e['type'] == 'O' else 'E', frames[e['frame']], float(e['at'])))
        th[(i, p['name'])] = seq
    return th


def load(path):
    d = json.load(open(path))
    return threads_speedscope(path) if 'shared' in d else threads_chrome(path)


def balanced(seq):
    st = []
    for ph, name, _ in seq:
        if ph == 'B':
            st.append(name)
        elif not st or st.pop() != name:
            return False
    return not st


def cmd_structure(a, b):
    ta, tb = load(a), load(b)
    bad = 0
    for path, th in ((a, ta), (b, tb)):
        for k, seq in th.items():
            if not balanced(seq):
                print('%s: thread %s: B/E not balanced' % (path, k))
                bad += 1
    sa = sorted(tuple((p, n) for p, n, _ in s) for s in ta.values())
    sb = sorted(tuple((p, n) for p, n, _ in s) for s in tb.values())
    if sa != sb:
        print('threads differ: %d and %d threads, %d and %d events' %
              (len(sa), len(sb), sum(map(len, sa)), sum(map(len, sb))))
        for x, y in zip(sa, sb):
            if x != y:
                for i, (u, v) in enumerate(zip(x, y)):
                    if u != v:
                        print('  first difference at event %d: %s / %s' % (i, u, v))
                        break
                else:
                    print('  lengths %d / %d' % (len(x), len(y)))
                break
        bad += 1
    print('%d threads, %d events compared, %d differences' % (len(sa), sum(map(len, sa)), bad))
    return 1 if bad else 0


def cmd_stats(path, pj):
    th = load(path)
    calls, incl = {}, {}
    bad = 0
    for k, seq in th.items():
        if not balanced(seq):
            print('thread %s: B/E not balanced' % (k,))
            bad += 1
            continue
        st = []
        for ph, name, t in seq:
            if ph == 'B':
                st.append((name, t))
                calls[name] = calls.get(name, 0) + 1
            else:
                n, t0 = st.pop()
                incl[n] = incl.get(n, 0.0) + (t - t0)
    d = json.load(open(pj))
    rows = {r['sym']: r for r in d['events'][0]['rows']}
    for n in sorted(set(calls) | set(rows)):
        r = rows.get(n)
        if r is None or n not in calls:
            print('%s: in the file %s, in proff report %s' % (n, n in calls, r is not None))
            bad += 1
            continue
        if r['calls'] != calls[n]:
            print('%s: %d calls in the file, proff report %d' % (n, calls[n], r['calls']))
            bad += 1
        want = r['avg_total_ns'] * r['calls']
        if abs(incl.get(n, 0.0) - want) > calls[n] + 1:
            print('%s: inclusive %.0f ns in the file, proff report %.0f' % (n, incl.get(n, 0.0), want))
            bad += 1
    print('%d functions, %d calls compared, %d differences' % (len(calls), sum(calls.values()), bad))
    return 1 if bad or not calls else 0


if __name__ == '__main__':
    if len(sys.argv) == 4 and sys.argv[1] == 'structure':
        sys.exit(cmd_structure(sys.argv[2], sys.argv[3]))
    if len(sys.argv) == 4 and sys.argv[1] == 'stats':
        sys.exit(cmd_stats(sys.argv[2], sys.argv[3]))
    sys.exit(__doc__)
