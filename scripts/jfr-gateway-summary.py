#!/usr/bin/env python3
"""Summarises JFR execution samples of the W8 node (gateway) by component, thread group, leaf frame and
application frame (inclusive).

  jfr print --stack-depth 96 --events jdk.ExecutionSample node.jfr > node.txt
  python3 scripts/jfr-gateway-summary.py node.txt [top-N [HH:MM:SS [HH:MM:SS]]]

A sample's component is the first marker found from the leaf up; the optional times keep only the
samples between them (the CPU windows at the end of a W8 run, say). Class loading and JFR itself are
left out.
"""
import collections, re, sys
EXCLUDE = ('java.lang.ClassLoader.loadClass', 'jdk.jfr.', 'jdk.internal.loader', 'io.otl.node.TrainingNode.start')
MARKERS = [
    ('io.otl.http.gateway', 'gateway code'),
    ('PersistedCodec', 'journal serializer'),
    ('Desensitizer', 'desensitizer'),
    ('io.otl.core.session', 'AgentSession'),
    ('JournalSessionOwners', 'owner read'),
    ('ch.qos.logback', 'logging'), ('org.slf4j', 'logging'), ('pekko.event', 'logging'),
    ('org.postgresql', 'PostgreSQL driver'),
    ('com.zaxxer', 'HikariCP'),
    ('slick.', 'Slick'),
    ('persistence.jdbc', 'persistence-jdbc'),
    ('persistence.typed', 'persistence-typed'),
    ('pekko.persistence', 'persistence classic'),
    ('cluster.sharding', 'sharding'),
    ('com.fasterxml.jackson', 'Jackson'),
    ('pekko.http.impl.engine.client', 'http client'),
    ('pekko.http.impl.engine.server', 'http server engine'),
    ('pekko.http.scaladsl.server', 'http routing'), ('pekko.http.javadsl.server', 'http routing'),
    ('io.otl.http', 'api routes'),
    ('pekko.http.impl.engine.parsing', 'http parsing'),
    ('pekko.http.impl.engine.rendering', 'http rendering'),
    ('pekko.http', 'http other'),
    ('pekko.stream.impl.io', 'stream tcp io'), ('pekko.io.', 'pekko io'),
    ('pekko.stream', 'streams'),
    ('pekko.remote', 'remoting'), ('pekko.cluster', 'cluster'),
    ('pekko.dispatch', 'dispatch'), ('pekko.actor', 'actors'), ('pekko.', 'pekko other'),
    ('scala.concurrent', 'scala futures'),
    ('java.util.concurrent', 'JDK concurrency'),
    ('sun.nio', 'nio'), ('java.nio', 'nio'),
    ('java.lang.invoke', 'lambda linkage'),
]
FRAME = re.compile(r'\s{4,}([\w.$]+\.[\w$<>]+)\(')
def samples(path):
    frames, thread = None, None
    with open(path) as f:
        for line in f:
            if line.startswith('jdk.ExecutionSample'):
                if frames: yield thread, frames
                frames, thread = [], '?'
                continue
            if frames is None: continue
            m = re.match(r'\s*startTime = (\d\d:\d\d:\d\d)', line)
            if m and len(sys.argv) > 3 and not (sys.argv[3] <= m.group(1) <= (sys.argv[4] if len(sys.argv) > 4 else '99')):
                frames = None; continue
            m = re.match(r'\s*sampledThread = "(.*)" \(', line)
            if m: thread = re.sub(r'\d+', 'N', m.group(1)); continue
            m = FRAME.match(line)
            if m: frames.append(m.group(1))
    if frames: yield thread, frames
def main():
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    comp, leaf, app, thr = (collections.Counter() for _ in range(4))
    n = skipped = 0
    for t, fr in samples(sys.argv[1]):
        if any(any(e in f for e in EXCLUDE) for f in fr): skipped += 1; continue
        n += 1; leaf[fr[0]] += 1; thr[t] += 1
        comp[next((name for f in fr for m, name in MARKERS if m in f), 'other (JVM, I/O)')] += 1
        for f in dict.fromkeys(f for f in fr if f.startswith('io.otl.')): app[f] += 1
    print(f'{n} samples ({skipped} class loading/JFR left out)')
    for title, c in (('component', comp), ('threads', thr), ('leaf frames', leaf), ('application frames (inclusive)', app)):
        print('==', title)
        for k, v in c.most_common(top): print(f'{100*v/max(n,1):5.1f}% {v:6d} {k}')
main()
