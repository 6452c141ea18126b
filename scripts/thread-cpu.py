#!/usr/bin/env python3
"""CPU seconds per thread group of a process between two snapshots, with the kernel (system) part.

  python3 scripts/thread-cpu.py snap PID a.json   (later)   python3 scripts/thread-cpu.py snap PID b.json
  python3 scripts/thread-cpu.py diff a.json b.json

Groups are /proc comm names with digits as N; Linux cuts them to 15 characters, so all pekko
dispatchers of a JVM fall into one group ("otl-pekko.actor"). Threads that ended in between are lost.
"""
import os, re, sys, json, collections
HZ = os.sysconf('SC_CLK_TCK')
def snap(pid):
    d = {}
    for t in os.listdir(f'/proc/{pid}/task'):
        try:
            s = open(f'/proc/{pid}/task/{t}/stat').read()
        except OSError:
            continue
        name = s[s.index('(')+1:s.rindex(')')]
        f = s[s.rindex(')')+2:].split()
        d[t] = (name, (int(f[11]) + int(f[12])) / HZ, int(f[12]) / HZ)
    return d
if sys.argv[1] == 'snap':
    json.dump(snap(sys.argv[2]), open(sys.argv[3], 'w'))
else:
    a = json.load(open(sys.argv[2])); b = json.load(open(sys.argv[3]))
    g = collections.Counter(); sy = collections.Counter()
    for t, v in b.items():
        name, cpu = v[0], v[1]
        prev = a.get(t, [name, 0.0, 0.0])
        g[re.sub(r'\d+', 'N', name)] += cpu - prev[1]
        if len(v) > 2 and len(prev) > 2: sy[re.sub(r'\d+', 'N', name)] += v[2] - prev[2]
    tot = sum(g.values())
    print(f'total {tot:.2f} s')
    for k, v in g.most_common(25):
        print(f'{v:8.2f} s {100*v/max(tot,1e-9):5.1f}% {k}  (system {sy[k]:.2f} s)')
