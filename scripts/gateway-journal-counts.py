#!/usr/bin/env python3
"""What one gateway call costs the journal: SQL statements, round trips, transactions, rows (per call).

  PROXY_PID=<pid of scripts/pg-count-proxy.py> PROXY_OUT=/tmp/counts.json DB=<database> HTTP_PORT=19100 \
  SIM_URL=http://127.0.0.1:19103/v1 CONC=1 HISTORY=1 python3 scripts/gateway-journal-counts.py

The node runs with its journal through the proxy (a database of its own, so pg_stat_database is the node's
alone) and a model server at SIM_URL (`java -jar otl-node.jar simulator --port 19103`); agent bench-agent is
registered on it. After a warm-up, an idle window measures the node's background (read-side polls, metrics
sampling), subtracted per second from each phase: calls with no X-Session-Id, calls with a new X-Session-Id
(W8's default), turns 2-5 of those sessions, and with HISTORY an agent that resends its conversation.
CONC=1 gives whole numbers; with more, the journal joins concurrent writes into one transaction.
"""
import json, os, signal, subprocess, sys, time, urllib.request, concurrent.futures as cf

PORT = int(os.environ.get("HTTP_PORT", "19100"))
SIM = os.environ.get("SIM_URL", "http://127.0.0.1:19102/v1")
DB = os.environ.get("DB", "p1trips")
PROXY_PID = int(os.environ["PROXY_PID"])
PROXY_OUT = os.environ["PROXY_OUT"]
N = int(os.environ.get("N", "200"))
CONC = int(os.environ.get("CONC", "4"))
TAG = os.environ.get("TAG", "x")
SETTLE = float(os.environ.get("SETTLE", "12"))
GW = f"http://127.0.0.1:{PORT}/v1/chat/completions"


def http(method, url, body=None, headers=None):
    req = urllib.request.Request(url, data=None if body is None else json.dumps(body).encode(), method=method,
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def psql(sql):
    return subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", DB, "-AtF", "\t", "-c", sql],
                          capture_output=True, text=True, check=True).stdout


def pg_stats():
    s = {}
    row = psql(f"select xact_commit, xact_rollback, tup_inserted, tup_updated, tup_deleted, tup_fetched, tup_returned "
               f"from pg_stat_database where datname = '{DB}'").split("\t")
    for k, v in zip(["xact_commit", "xact_rollback", "tup_inserted", "tup_updated", "tup_deleted", "tup_fetched",
                     "tup_returned"], row):
        s["db." + k] = int(v)
    for line in psql("select relname, n_tup_ins, n_tup_upd, n_tup_del, coalesce(seq_scan,0), coalesce(idx_scan,0), "
                     "coalesce(seq_tup_read,0), coalesce(idx_tup_fetch,0) from pg_stat_user_tables").splitlines():
        f = line.split("\t")
        for k, v in zip(["ins", "upd", "del", "seq_scan", "idx_scan", "seq_tup_read", "idx_tup_fetch"], f[1:]):
            s[f"{f[0]}.{k}"] = int(v)
    return s


def proxy():
    os.kill(PROXY_PID, signal.SIGUSR1)
    time.sleep(0.5)
    with open(PROXY_OUT) as f:
        return json.load(f)


def snap():
    return pg_stats(), proxy()


def diff(a, b):
    keys = set(a) | set(b)
    return {k: b.get(k, 0) - a.get(k, 0) for k in keys if b.get(k, 0) - a.get(k, 0)}


def body(i, history=None):
    msgs = [{"role": "system", "content": "You are a travel agent."}]
    msgs += history or []
    msgs.append({"role": "user", "content": f"plan a weekend trip number {i} with two museums and a dinner"})
    return {"model": "default", "stream": False, "messages": msgs}


def call(i, session=None, history=None):
    h = {"X-Agent-Id": "bench-agent"}
    if session:
        h["X-Session-Id"] = session
    st, b = http("POST", GW, body(i, history), h)
    if st != 200:
        raise RuntimeError(f"{st} {b[:300]}")
    return json.loads(b)


def phase(name, calls, fn):
    time.sleep(SETTLE)
    a = snap()
    t0 = time.time()
    with cf.ThreadPoolExecutor(CONC) as ex:
        list(ex.map(fn, range(calls)))
    dur = time.time() - t0
    time.sleep(SETTLE)
    b = snap()
    return name, calls, dur + SETTLE, diff(a[0], b[0]), diff(a[1], b[1])


def idle(seconds):
    time.sleep(SETTLE)
    a = snap()
    time.sleep(seconds)
    b = snap()
    return diff(a[0], b[0]), diff(a[1], b[1])


def report(results, idle_rate):
    out = {}
    for name, calls, secs, pgd, px in results:
        per = {}
        for k, v in list(pgd.items()) + list(px.items()):
            base = idle_rate.get(k, 0) * secs
            per[k] = round((v - base) / calls, 3)
        out[name] = {"calls": calls, "seconds": round(secs, 1),
                     "perCall": {k: v for k, v in sorted(per.items()) if abs(v) >= 0.004}}
    return out


def main():
    st, b = http("POST", f"http://127.0.0.1:{PORT}/v1/models/bench-agent/versions",
                 {"version": "v1", "artifact": "file:///models/v1", "endpoint": SIM})
    print("register", st, b[:200], flush=True)
    for _ in range(120):
        st, b = http("GET", f"http://127.0.0.1:{PORT}/v1/models/bench-agent/route?sessionId=probe")
        if st == 200 and json.loads(b).get("version") == "v1":
            break
        time.sleep(1)
    # warm-up: every path a few hundred times
    with cf.ThreadPoolExecutor(CONC) as ex:
        list(ex.map(lambda i: call(i), range(300)))
        list(ex.map(lambda i: call(i, f"warm-{TAG}-{i}"), range(300)))
        for t in range(1, 5):
            list(ex.map(lambda i: call(i * 10 + t, f"warm-{TAG}-{i}"), range(300)))
    idle_secs = float(os.environ.get("IDLE", "30"))
    pgd, px = idle(idle_secs)
    idle_rate = {k: v / (idle_secs + 0.5) for k, v in list(pgd.items()) + list(px.items())}
    results = [
        phase("generated-id (no X-Session-Id)", N, lambda i: call(i)),
        phase("new X-Session-Id (W8)", N, lambda i: call(i, f"s-{TAG}-{i}")),
        # a new user message each (numbered past the first calls': a resent one is a duplicate, nothing written)
        phase("turns 2..5 of those sessions", 4 * N, lambda j: call(N + j, f"s-{TAG}-{j % N}")),
    ]
    hist = os.environ.get("HISTORY")
    if hist:
        # an agent that resends its history: first call, then 4 more each with the whole conversation
        convs = {}

        def conv(i, t):
            sid = f"h-{TAG}-{i}"
            r = call(i * 10 + t, sid, convs.get(sid, []))
            convs[sid] = convs.get(sid, []) + [body(i * 10 + t)["messages"][-1],
                                               {"role": "assistant", "content": r["choices"][0]["message"]["content"]}]
        results.append(phase("history: 1st call", N, lambda i: conv(i, 0)))
        results.append(phase("history: calls 2..5", 4 * N, lambda j: conv(j % N, 1 + j // N)))
    print(json.dumps({"idlePerSecond": {k: round(v, 3) for k, v in sorted(idle_rate.items())},
                      "phases": report(results, idle_rate)}, indent=1))


main()
