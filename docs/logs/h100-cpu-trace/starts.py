#!/usr/bin/env python3
"""When each parallel step's goroutines started, from a Go execution trace.

Usage: go tool trace -d=parsed TRACE | python3 starts.py

Goroutines are grouped by the geoknn function that created them (the first
geoknn frame of the creation stack past the parallel package); for each
group and each query (a gap of over 20 ms between starts begins the next),
it prints the start of every goroutine after the first, in ms. The trace of
dev79.sh (BenchmarkCPUGrid, 2^22 x 2^16, 16 cores, the build before the
team) is dev79-trace16.out.gz beside this script.
"""
import collections
import re
import sys

event = re.compile(r'M=(-?\d+) P=(-?\d+) G=(-?\d+) (\w+) Time=(\d+)(.*)')
creator, first_run = {}, {}
lines = sys.stdin.read().split('\n')
i = 0
while i < len(lines):
    m = event.match(lines[i])
    if not m:
        i += 1
        continue
    kind, t, rest = m.group(4), int(m.group(5)), m.group(6)
    j, stack = i + 1, []
    while j < len(lines) and not event.match(lines[j]):
        s = lines[j].strip()
        if '@' in s and not s.startswith('/'):
            stack.append(s.split(' @')[0])
        j += 1
    if kind == 'StateTransition' and 'GoID=' in rest:
        g = int(re.search(r'GoID=(\d+)', rest).group(1))
        a, b = re.search(r'(\w+)->(\w+)', rest).groups()
        if a == 'NotExist':
            own = [f for f in stack if 'geoknn' in f and 'internal/parallel' not in f and 'parallelFor' not in f]
            creator[g] = own[0].split('/')[-1] if own else '?'
        if b == 'Running' and g not in first_run:
            first_run[g] = t
    i = j

groups = collections.defaultdict(list)
for g, t in first_run.items():
    if creator.get(g, '?').startswith('engine.'):
        groups[creator[g]].append(t)
for name, starts in sorted(groups.items(), key=lambda x: min(x[1])):
    starts.sort()
    query = [starts[0]]
    for t in starts[1:] + [None]:
        if t is None or t - query[-1] > 20e6:
            if len(query) > 1:
                print(f"{name[:34]:34s} {len(query):3d} goroutines, started after the first (ms):",
                      " ".join(f"{(x - query[0]) / 1e6:.2f}" for x in query[1:]))
            query = [t]
        else:
            query.append(t)
