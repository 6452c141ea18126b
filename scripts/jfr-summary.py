#!/usr/bin/env python3
"""Summarises JFR execution (or allocation) samples of a Bench run by component, leaf frame and application frame.

  jfr print --stack-depth 64 --events jdk.ExecutionSample w1.jfr > w1.txt
  python3 scripts/jfr-summary.py w1.txt [top-N] [--from HH:MM:SS] [--to HH:MM:SS]

  jfr print --stack-depth 64 --events jdk.ObjectAllocationSample w1.jfr > w1-alloc.txt
  python3 scripts/jfr-summary.py w1-alloc.txt 30 --from 13:09:38 --to 13:09:47

Samples of the load generator's set-up (EventGen, baseline, node start), class loading and JFR
itself are left out, so the shares are those of the node while it ingests. A sample's component
is the first marker found from the leaf up (the serializer inside persistence-jdbc counts as the
serializer, a JDBC call inside Slick as the driver). Allocation samples are weighted by their
weight (bytes); --from/--to keep the samples of a window (UTC, as `jfr print` shows startTime; Bench's
W1/W2 print their measured window as "ingest window ... (UTC) A to B").
"""
import argparse
import collections
import re

EXCLUDE = ('io.otl.bench.EventGen', 'io.otl.bench.Baseline', 'io.otl.bench.Ingest.prepare',
           'java.lang.ClassLoader.loadClass', 'io.otl.node.TrainingNode.start', 'io.otl.bench.Bench.main',
           'jdk.jfr.', 'java.lang.invoke.', 'jdk.internal.loader')
MARKERS = [
    ('PersistedCodec.fromBinary', 'serializer: read (JSON -> event)'),
    ('PersistedCodec.toBinary', 'serializer: write (event -> JSON)'),
    ('Desensitizer', 'desensitizer'),
    ('AgentSession', 'AgentSession (validation, state)'),
    ('DataCollector', 'DataCollector'),
    ('io.otl.http.', 'HTTP routes, request parse (io.otl.http, wire-json)'),
    ('io.otl.wire.', 'HTTP routes, request parse (io.otl.http, wire-json)'),
    ('org.postgresql', 'PostgreSQL driver'),
    ('com.zaxxer', 'HikariCP'),
    ('slick.', 'Slick'),
    ('persistence.jdbc.query', 'read journal (queries)'),
    ('persistence.jdbc', 'persistence-jdbc (write)'),
    ('persistence.typed', 'persistence-typed'),
    ('pekko.persistence', 'pekko-persistence (classic)'),
    ('TaggedEventFeed', 'trajectory feed'),
    ('TrajectoryFeed', 'trajectory feed'),
    ('coordinator', 'coordinator'),
    ('pekko.cluster.sharding', 'sharding'),
    ('jdk.internal.net.http', 'HTTP client (the benchmark, W2)'),
    ('pekko.http', 'HTTP server (pekko-http)'),
    ('pekko.stream', 'streams'),
    ('pekko.', 'actors/dispatch'),
    ('scala.concurrent', 'futures'),
    ('java.util.concurrent', 'JDK concurrency/threads'),
]
FRAME = re.compile(r'\s{4,}[\w.$]+\.[\w$<>]+\(')
START = re.compile(r'\s*startTime = (\d\d:\d\d:\d\d(?:\.\d+)?)')
WEIGHT = re.compile(r'\s*weight = ([\d.,]+)\s*(bytes|kB|MB|GB)?')
UNITS = {None: 1, 'bytes': 1, 'kB': 1024, 'MB': 1024 ** 2, 'GB': 1024 ** 3}


def samples(path):
    """(startTime, weight, frames) per sample; weight 1 for execution samples."""
    frames = None
    start, weight = '', 1
    with open(path) as f:
        for line in f:
            if line.startswith('jdk.ExecutionSample') or line.startswith('jdk.ObjectAllocationSample'):
                if frames:
                    yield start, weight, frames
                frames, start, weight = [], '', 1
            elif frames is not None and FRAME.match(line):
                frames.append(line.strip().split(' line:')[0])
            elif frames is not None and START.match(line):
                start = START.match(line).group(1)
            elif frames is not None and WEIGHT.match(line):
                m = WEIGHT.match(line)
                weight = float(m.group(1).replace(',', '')) * UNITS[m.group(2)]
    if frames:
        yield start, weight, frames


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('file')
    ap.add_argument('top', nargs='?', type=int, default=20)
    ap.add_argument('--from', dest='since', default='')
    ap.add_argument('--to', dest='until', default='')
    a = ap.parse_args()
    component, leaf, app = collections.Counter(), collections.Counter(), collections.Counter()
    n = skipped = 0
    for start, w, fr in samples(a.file):
        if (a.since and start < a.since) or (a.until and start > a.until):
            continue
        if any(any(e in f for e in EXCLUDE) for f in fr):
            skipped += 1
            continue
        n += w
        leaf[fr[0]] += w
        component[next((name for f in fr for m, name in MARKERS if m in f), 'other (JVM, I/O)')] += w
        for f in dict.fromkeys(f for f in fr if f.startswith('io.otl.') and not f.startswith('io.otl.bench.')):
            app[f] += w
    print(f'{n:,.0f} samples (or sampled bytes) of the node ({skipped} samples of set-up, class loading and JFR'
          ' left out)')
    for title, counter in (('component', component), ('leaf frames (self)', leaf),
                           ('application frames (inclusive)', app)):
        print(f'== {title}')
        for k, v in counter.most_common(a.top):
            print(f'{100 * v / max(n, 1):5.1f}% {k}')


if __name__ == '__main__':
    main()
