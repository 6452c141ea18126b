#!/usr/bin/env python3
"""A counting TCP proxy for PostgreSQL's wire protocol: how often each SQL text was executed.

  python3 scripts/pg-count-proxy.py 19150 /tmp/counts.json &    # then kill -USR1 <pid> to write the counts

Counts, unlike timings, do not move with the machine's load (BENCHMARKS.md W8, session 37). Point the node
at it: OTL_DB_URL='jdbc:postgresql://127.0.0.1:19150/db?sslmode=disable&gssEncMode=disable'. It forwards
to 127.0.0.1:5432 and reads the client's messages: Parse (P) names a statement's SQL, Bind (B) picks one,
Execute (E) counts it, Query (Q) counts its text, Sync (S) is one round trip ("#sync"); "#rows_in_inserts"
adds the VALUES tuples of each executed INSERT (pgjdbc's reWriteBatchedInserts joins rows). pg_stat_statements
would say the same, but it needs a server restart to load; this needs nothing of the server.
"""
import asyncio, json, os, signal, struct, sys, collections, re

LISTEN = int(sys.argv[1])
OUT = sys.argv[2]
counts = collections.Counter()
bytes_up = [0]


def norm(sql):
    sql = re.sub(r"\s+", " ", sql.strip())
    sql = re.sub(r"\(\$\d+(, ?\$\d+)*\)(, ?\(\$\d+(, ?\$\d+)*\))+", "(…rows…)", sql)
    return sql[:220]


def rows_of(sql):
    return sql.count("),(") + sql.count("), (") + 1 if "values" in sql.lower() else 1


async def pump_front(reader, writer, conn):
    stmts = {}
    current = [None]
    started = False
    buf = b""
    while True:
        data = await reader.read(65536)
        if not data:
            break
        writer.write(data)
        await writer.drain()
        bytes_up[0] += len(data)
        buf += data
        while True:
            if not started:
                if len(buf) < 8:
                    break
                ln, code = struct.unpack("!ii", buf[:8])
                if len(buf) < ln:
                    break
                buf = buf[ln:]
                if code not in (80877103, 80877104):
                    started = True
                continue
            if len(buf) < 5:
                break
            t = buf[0:1]
            ln = struct.unpack("!i", buf[1:5])[0]
            if len(buf) < 1 + ln:
                break
            body = buf[5:1 + ln]
            buf = buf[1 + ln:]
            if t == b"P":
                name, rest = body.split(b"\0", 1)
                sql, _ = rest.split(b"\0", 1)
                stmts[name] = sql.decode("utf-8", "replace")
                current[0] = stmts[name]
            elif t == b"B":
                portal, rest = body.split(b"\0", 1)
                name, _ = rest.split(b"\0", 1)
                current[0] = stmts.get(name, "?unknown:" + name.decode())
            elif t == b"E":
                s = current[0] or "?"
                counts["EXEC " + norm(s)] += 1
                counts["#exec"] += 1
                counts["#rows_in_inserts"] += rows_of(s) if s.lower().startswith("insert") else 0
            elif t == b"Q":
                s = body.rstrip(b"\0").decode("utf-8", "replace")
                counts["QUERY " + norm(s)] += 1
                counts["#exec"] += 1
            elif t == b"S":
                counts["#sync"] += 1
    writer.close()


async def pump_back(reader, writer):
    while True:
        data = await reader.read(65536)
        if not data:
            break
        writer.write(data)
        await writer.drain()
    writer.close()


async def handle(cr, cw):
    counts["#connections"] += 1
    sr, sw = await asyncio.open_connection("127.0.0.1", 5432)
    await asyncio.gather(pump_front(cr, sw, None), pump_back(sr, cw), return_exceptions=True)


def dump(*_):
    with open(OUT, "w") as f:
        json.dump(dict(counts), f, indent=1, sort_keys=True)


async def main():
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, dump)
    server = await asyncio.start_server(handle, "127.0.0.1", LISTEN)
    async with server:
        await server.serve_forever()

asyncio.run(main())
