#!/usr/bin/env python3
"""Summarises JFR execution samples of a Bench run by component, leaf frame and application frame.

  jfr print --stack-depth 64 --events jdk.ExecutionSample w1.jfr > w1.txt
  python3 scripts/jfr-summary.py w1.txt [top-N]

Samples of the load generator's set-up (EventGen, baseline, node start), class loading and JFR
itself are left out, so the shares are those of the node while it ingests. A sample's component
is the first marker found from the leaf up (the serializer inside persistence-jdbc counts as the
serializer, a JDBC call inside Slick as the driver).
"""
import collections
import re
import sys

EXCLUDE = ('io.otl.bench.EventGen', 'io.otl.bench.Baseline', 'io.otl.bench.Ingest.prepare',
           'java.lang.ClassLoader.loadClass', 'io.otl.node.TrainingNode.start', 'io.otl.bench.Bench.main',
           'jdk.jfr.', 'java.lang.invoke.', 'jdk.internal.loader')
MARKERS = [
    ('PersistedCodec.fromBinary', 'serializer: read (JSON -> event)'),
    ('PersistedCodec.toBinary', 'serializer: write (event -> JSON)'),
    ('Desensitizer', 'desensitizer'),
    ('AgentSession', 'AgentSession (validation, state)'),
    ('DataCollector', 'DataCollector'),
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
    ('pekko.stream', 'streams'),
    ('pekko.', 'actors/dispatch'),
    ('scala.concurrent', 'futures'),
    ('java.util.concurrent', 'JDK concurrency/threads'),
]
FRAME = re.compile(r'\s{4,}[\w.$]+\.[\w$<>]+\(')


def samples(path):
    frames = None
    with open(path) as f:
        for line in f:
            if line.startswith('jdk.ExecutionSample'):
                if frames:
                    yield frames
                frames = []
            elif frames is not None and FRAME.match(line):
                frames.append(line.strip().split(' line:')[0])
    if frames:
        yield frames


def main():
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    component, leaf, app = collections.Counter(), collections.Counter(), collections.Counter()
    n = skipped = 0
    for fr in samples(sys.argv[1]):
        if any(any(e in f for e in EXCLUDE) for f in fr):
            skipped += 1
            continue
        n += 1
        leaf[fr[0]] += 1
        component[next((name for f in fr for m, name in MARKERS if m in f), 'other (JVM, I/O)')] += 1
        for f in dict.fromkeys(f for f in fr if f.startswith('io.otl.') and not f.startswith('io.otl.bench.')):
            app[f] += 1
    print(f'{n} samples of the node ({skipped} of set-up, class loading and JFR left out)')
    for title, counter in (('component', component), ('leaf frames (self)', leaf),
                           ('application frames (inclusive)', app)):
        print(f'== {title}')
        for k, v in counter.most_common(top):
            print(f'{100 * v / max(n, 1):5.1f}% {k}')


if __name__ == '__main__':
    main()
