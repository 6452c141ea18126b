#!/usr/bin/env python3
"""Mutation trial of a running node's public HTTP contract (a manual tool, not run by CI).

Starts from a valid request for each route of design 7.1, 7.5 and 7.6, sends mutations of it
(fields removed / null / of another JSON type / empty / 1 MB / odd numbers / odd unicode, raw-body
damage, odd path ids, wrong methods and content types, bad query values) and checks:
  (a) no 5xx (but a documented 503) and no dropped connection;
  (b) every 4xx has the error shape: {"error","message"} on the API, OpenAI's {"error":{...}} on the gateway;
  (c) a refused write changes nothing (the fresh entity it named is still unknown; an existing session, model or
      coordinator keeps its GET and audit views; global views unchanged by a batch of refused requests);
  (e) no raw e-mail or phone sent in an accepted body comes back from GET views.
Durability (d) is checked with --check-durable after a kill -9 and restart on the same data folder.

  python3 scripts/http-contract-fuzz.py --base http://127.0.0.1:8080 --out /tmp/fuzz
  # kill -9 the node, start it again on the same folder, then:
  python3 scripts/http-contract-fuzz.py --base http://127.0.0.1:8080 --out /tmp/fuzz --check-durable

Writes <out>/requests.jsonl (one line per request: method, path, note, status, body head) and
<out>/findings.jsonl (the invariant violations); prints counts per route and status.
Needs `requests`. Every id it makes is a fresh uuid4 hex, so it can run against a node with data.
"""
import argparse
import collections
import copy
import gzip
import json
import os
import sys
import uuid

import requests

EMAIL = "fuzz.person@example.com"
PHONE = "+14155552671"
HUGE = "x" * (1024 * 1024)
STRINGS = ["", " ", HUGE, "\ud800", "a\u0000b", "\u202eevil\u202c", "\U0001F600", "\u2028", "../..", "%2F"]
NUMBERS = [0, -1, -0.0, 0.5, 1e308, 9223372036854775808, -9223372036854775809, 2147483648, 10 ** 40]
OTHERS = [None, True, False, [], {}, [1], {"k": "v"}]


def hexid(prefix):
    return prefix + "-" + uuid.uuid4().hex


class Fuzz:
    def __init__(self, base, out):
        self.base = base.rstrip("/")
        self.out = out
        self.s = requests.Session()
        self.counts = collections.defaultdict(collections.Counter)
        self.req_log = open(os.path.join(out, "requests.jsonl"), "a")
        self.find_log = open(os.path.join(out, "findings.jsonl"), "a")
        self.findings = 0
        self.accepted = []  # (route, id) acknowledged writes, for the durability check
        self.only = None

    def finding(self, kind, route, note, status, body, extra=""):
        self.findings += 1
        rec = {"kind": kind, "route": route, "note": note, "status": status, "body": body[:600], "extra": extra}
        self.find_log.write(json.dumps(rec) + "\n")
        self.find_log.flush()

    def send(self, route, method, path, note, body=None, headers=None, gateway=False, raw=None, ok503=False):
        h = {"Content-Type": "application/json"} if (body is not None or raw is not None) else {}
        if gateway:
            h["X-Agent-Id"] = "fz-gw"
        if headers:
            h.update(headers)
        h = {k: v for k, v in h.items() if v is not None}
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode("utf-8", "surrogatepass"))
        try:
            r = self.s.request(method, self.base + path, data=data, headers=h, timeout=60)
        except requests.exceptions.InvalidHeader:
            self.counts[route]["not-sent"] += 1  # the client refuses the header (leading white space): not the node's
            return None
        except requests.RequestException as e:
            self.counts[route]["conn-error"] += 1
            self.finding("dropped", route, note, -1, str(e))
            self.s = requests.Session()
            return None
        text = r.text
        self.counts[route][r.status_code] += 1
        self.req_log.write(json.dumps({"route": route, "m": method, "path": path[:300], "note": note,
                                       "status": r.status_code, "body": text[:300]}) + "\n")
        if r.status_code >= 500 and not (r.status_code == 503 and ok503):
            self.finding("5xx", route, note, r.status_code, text)
        if 400 <= r.status_code < 500 and method != "HEAD":  # a HEAD answer has no body
            self.check_error_shape(route, note, r, gateway)
        return r

    def check_error_shape(self, route, note, r, gateway):
        try:
            j = r.json()
        except ValueError:
            self.finding("shape", route, note, r.status_code, r.text, "4xx body is not JSON")
            return
        if gateway:
            e = j.get("error") if isinstance(j, dict) else None
            if not (isinstance(e, dict) and isinstance(e.get("message"), str) and "type" in e):
                self.finding("shape", route, note, r.status_code, r.text, "not OpenAI's error object")
        elif not (isinstance(j, dict) and isinstance(j.get("error"), str) and isinstance(j.get("message"), str)):
            self.finding("shape", route, note, r.status_code, r.text, "not {error,message}")
        if r.status_code == 405 and "Allow" not in r.headers:
            self.finding("shape", route, note, r.status_code, r.text, "405 without Allow")

    # ---------- mutation generators ----------
    @staticmethod
    def paths(v, prefix=()):
        yield prefix
        if isinstance(v, dict):
            for k, x in v.items():
                yield from Fuzz.paths(x, prefix + (k,))
        elif isinstance(v, list):
            for i, x in enumerate(v):
                yield from Fuzz.paths(x, prefix + (i,))

    @staticmethod
    def setp(doc, path, value, remove=False):
        d = copy.deepcopy(doc)
        if not path:
            return value
        cur = d
        for p in path[:-1]:
            cur = cur[p]
        if remove:
            del cur[path[-1]]
        else:
            cur[path[-1]] = value
        return d

    def mutations(self, valid):
        for p in self.paths(valid):
            name = ".".join(map(str, p)) or "<root>"
            if p:
                yield "remove " + name, self.setp(valid, p, None, remove=True)
            for v in OTHERS + NUMBERS + STRINGS:
                label = repr(v)[:20]
                yield f"{name}={label}", self.setp(valid, p, v)
        yield "extra field", dict(valid, zzUnknown=1) if isinstance(valid, dict) else valid

    def raw_mutations(self, valid):
        t = json.dumps(valid)
        yield "empty body", b"", None
        yield "truncated", t[: len(t) // 2].encode(), None
        yield "trailing garbage", (t + "}x").encode(), None
        yield "two documents", (t + t).encode(), None
        yield "duplicate key", ("{" + '"a":1,"a":2,' + t[1:]).encode() if t.startswith("{") else t.encode(), None
        yield "deep nesting", ("[" * 5000 + "]" * 5000).encode(), None
        yield "deep object", ('{"a":' * 200 + "1" + "}" * 200).encode(), None
        yield "bom", b"\xef\xbb\xbf" + t.encode(), None
        yield "latin1 bytes", t.encode()[:-1] + b"\xff}", None
        yield "nan", t.replace("{", '{"n":NaN,', 1).encode(), None
        yield "1e999", t.replace("{", '{"n":1e999,', 1).encode(), None
        yield "text/plain", t.encode(), {"Content-Type": "text/plain"}
        yield "no content-type", t.encode(), {"Content-Type": None}
        yield "charset latin1", t.encode(), {"Content-Type": "application/json; charset=iso-8859-1"}
        yield "charset utf-16", t.encode("utf-16"), {"Content-Type": "application/json; charset=utf-16"}
        yield "charset UTF-8 quoted", t.encode(), {"Content-Type": 'application/json; charset="UTF-8"'}
        yield "gzip", gzip.compress(t.encode()), {"Content-Encoding": "gzip"}
        yield "gzip bogus", b"not gzip", {"Content-Encoding": "gzip"}
        yield "form", b"a=1", {"Content-Type": "application/x-www-form-urlencoded"}

    # ---------- routes ----------
    def route_specs(self):
        """(route, method, path from an id, valid body for that id) of each route whose body is mutated."""
        agent = "fz-agent"

        def events_body(sid):
            return {"agentId": agent, "events": [
                {"type": "start", "eventId": "st", "agentVersion": "1", "metadata": {"k": "v"}},
                {"type": "message", "eventId": "m1", "role": "user", "content": "mail " + EMAIL + " or " + PHONE},
                {"type": "tool_call", "eventId": "t1", "callId": "c1", "toolName": "lookup", "input": {"q": 1},
                 "output": {"r": "ok"}, "success": True, "latencyMs": 5},
                {"type": "reasoning", "eventId": "r1", "index": 0, "thought": "t", "action": "a", "observation": "o"},
                {"type": "message", "eventId": "m2", "role": "assistant", "content": "ok", "msgId": "resp-1",
                 "latencyMs": 10, "at": "2026-12-01T00:00:00Z"},
                {"type": "result", "eventId": "res", "status": "SUCCESS", "detail": "done"}]}

        return [
            ("events", "POST", lambda sid: f"/v1/sessions/{sid}/events", events_body),
            ("feedback", "POST", lambda sid: f"/v1/sessions/{sid}/feedback",
             lambda sid: {"kind": "RATING", "value": 4, "feedbackId": "f1", "agentId": agent}),
            ("versions", "POST", lambda a: f"/v1/models/{a}/versions",
             lambda a: {"version": "v1", "artifact": "/tmp/none", "endpoint": "http://127.0.0.1:9/v1"}),
            ("policy", "PUT", lambda a: f"/v1/training/{a}/policy",
             lambda a: {"trigger.min-samples": 50, "algorithm": "dpo", "model-update.canary-ratio": 0.1}),
            ("chat", "POST", lambda sid: "/v1/chat/completions",
             lambda sid: {"model": "default", "messages": [{"role": "system", "content": "be brief"},
                                                           {"role": "user", "content": "hi " + EMAIL}],
                          "temperature": 0.5, "max_tokens": 16, "stream": False,
                          "metadata": {"session_id": sid}}),
            ("traces", "POST", lambda sid: "/v1/traces", self.otlp_body),
        ]

    @staticmethod
    def otlp_body(sid):
        tid = uuid.uuid4().hex
        return {"resourceSpans": [{"resource": {"attributes": [
            {"key": "service.name", "value": {"stringValue": "fz"}}]},
            "scopeSpans": [{"spans": [{"traceId": tid, "spanId": uuid.uuid4().hex[:16], "name": "chat fz",
                                       "kind": 3, "startTimeUnixNano": "1764547200000000000",
                                       "endTimeUnixNano": "1764547201000000000",
                                       "attributes": [
                                           {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                                           {"key": "gen_ai.conversation.id", "value": {"stringValue": sid}},
                                           {"key": "gen_ai.agent.name", "value": {"stringValue": "fz-otel"}},
                                           {"key": "gen_ai.response.id", "value": {"stringValue": "r-" + tid}},
                                           {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "3"}},
                                           {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(
                                               [{"role": "user", "content": "mail " + EMAIL + " or " + PHONE}])}},
                                           {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(
                                               [{"role": "assistant", "content": "ok"}])}}]}]}]}]}

    def unknown(self, route, ident):
        """True when a refused write left its fresh entity unknown (invariant c)."""
        if route in ("events", "feedback"):
            r = self.s.get(self.base + f"/v1/sessions/{ident}", timeout=30)
            return r.status_code == 404
        if route == "versions":  # GET /v1/models answers a v0 preview for any agent: ask the journal
            r = self.s.get(self.base + f"/v1/audit/model/{ident}", timeout=30)
            return r.status_code == 404
        if route == "policy":
            r = self.s.get(self.base + f"/v1/training/{ident}/policy", timeout=30)
            return r.status_code == 404
        if route in ("chat", "traces"):
            r = self.s.get(self.base + f"/v1/sessions/{ident}", timeout=30)
            return r.status_code == 404
        return True

    def run_body_mutations(self):
        for route, method, pathf, bodyf in self.route_specs():
            if self.only and route not in self.only:
                continue
            gateway = route == "chat"
            ident = hexid("fz")
            valid = bodyf(ident)
            r = self.send(route, method, pathf(ident), "valid", body=valid, gateway=gateway)
            if r is not None and r.status_code >= 300:
                print(f"!! valid {route} request answered {r.status_code}: {r.text[:300]}", file=sys.stderr)
            elif r is not None:
                self.accepted.append((route, ident))
            muts = [(n, b, None) for n, b in self.mutations(valid)]
            muts += [(n, None, (raw, hdr)) for n, raw, hdr in self.raw_mutations(valid)]
            for note, body, rawh in muts:
                ident = hexid("fz")
                if route == "traces" and body is not None:
                    body = rebind_otlp(body, ident)
                if route == "chat" and isinstance(body, dict) and isinstance(body.get("metadata"), dict):
                    body = dict(body, metadata=dict(body["metadata"], session_id=ident))
                hdr = {"X-Session-Id": ident} if gateway else {}
                if rawh is not None:
                    raw, extra = rawh
                    hdr.update(extra or {})
                    r = self.send(route, method, pathf(ident), note, raw=raw, headers=hdr, gateway=gateway)
                else:
                    r = self.send(route, method, pathf(ident), note, body=body, headers=hdr, gateway=gateway)
                if r is None:
                    continue
                if 400 <= r.status_code < 500 and r.status_code != 429:
                    if not self.unknown(route, ident):
                        self.finding("changed", route, note, r.status_code, r.text, f"entity {ident} exists after refusal")
                elif 200 <= r.status_code < 300:
                    self.accepted.append((route, ident))

    def run_path_ids(self):
        odd = ["%2F", "a%2Fb", "..", "%2E%2E", "a b", "a%20b", "%00", "%E2%80%AE", "%F0%9F%98%80", "%C3%A9",
               "x" * 300, "x" * 5000, "%", "%zz", "a;b", "a%3Bb", "-", "_", "a.b", "%ED%A0%80", "13812345678",
               "a@b.com", "%40", "null", "*"]
        gets = ["/v1/sessions/{}", "/v1/training/{}", "/v1/jobs/{}", "/v1/jobs/{}/logs", "/v1/models/{}",
                "/v1/models/{}/route?sessionId=s1", "/v1/audit/session/{}", "/v1/audit/model/{}",
                "/v1/audit/{}/x", "/v1/audit/session/{}/timeline", "/v1/audit/lineage/session/{}",
                "/v1/training/{}/policy"]
        posts = ["/v1/sessions/{}/events", "/v1/sessions/{}/feedback", "/v1/training/{}/trigger",
                 "/v1/jobs/{}/cancel", "/v1/models/{}/versions", "/v1/models/fz-agent/versions/{}/promote",
                 "/v1/models/fz-agent/versions/{}/rollback", "/v1/exports/{}?format=sft"]
        for o in odd:
            for g in gets:
                self.send("path-ids", "GET", g.format(o), "GET " + g + " id=" + o[:20])
            for p in posts:
                self.send("path-ids", "POST", p.format(o), "POST " + p + " id=" + o[:20], body={})

    def run_methods(self):
        routes = ["/v1/sessions/s1/events", "/v1/sessions/s1", "/v1/sessions/s1/feedback", "/v1/feedback/rate",
                  "/v1/feedback/thumbs", "/feedback/rate", "/feedback/thumbs", "/v1/training/a1",
                  "/v1/training/a1/trigger", "/v1/jobs", "/v1/jobs/j1", "/v1/jobs/j1/cancel", "/v1/jobs/j1/logs",
                  "/v1/models/a1", "/v1/models/a1/versions", "/v1/models/a1/versions/v1/promote",
                  "/v1/models/a1/versions/v1/rollback", "/v1/models/a1/route", "/v1/audit/session/s1",
                  "/health/live", "/health/ready", "/metrics", "/v1/training/a1/policy", "/v1/chat/completions",
                  "/v1/models", "/v1/traces", "/v1/agents", "/v1/openapi.json", "/v1/exports/a1"]
        for p in routes:
            for m in ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE"]:
                gw = p in ("/v1/chat/completions", "/v1/models")
                self.send("methods", m, p, m + " " + p, gateway=gw, ok503=p == "/health/ready")  # 405: Allow checked

    def run_queries(self):
        sid = hexid("fz")
        self.send("events", "POST", f"/v1/sessions/{sid}/events", "seed for queries",
                  body={"agentId": "fz-agent", "events": [{"type": "message", "role": "user", "content": "q"}]})
        bad = ["", "0", "-1", "1.5", "1e3", "abc", "99999999999999999999", "%00", "٣", "true", " 3", "3 ", "NaN",
               "2026-13-01T00:00:00Z", "2026-12-01", "0000-01-01T00:00:00Z", "+999999999-12-31T23:59:59Z", "x" * 3000]
        templ = [("rate", "POST", "/v1/feedback/rate?sessionId={s}&score={v}"),
                 ("rate", "POST", "/feedback/rate?sessionId={v}&score=4"),
                 ("thumbs", "POST", "/v1/feedback/thumbs?sessionId={s}&helpful={v}"),
                 ("thumbs", "POST", "/feedback/thumbs?sessionId={v}&helpful=true"),
                 ("jobs", "GET", "/v1/jobs?agentId={v}&status=RUNNING"),
                 ("jobs", "GET", "/v1/jobs?agentId=fz-agent&status={v}"),
                 ("logs", "GET", "/v1/jobs/j-none/logs?offset={v}&limit=10"),
                 ("logs", "GET", "/v1/jobs/j-none/logs?offset=0&limit={v}"),
                 ("audit", "GET", "/v1/audit/session/{s}?asOf={v}"),
                 ("audit", "GET", "/v1/audit/session/{s}?after={v}"),
                 ("audit", "GET", "/v1/audit/session/{s}?limit={v}"),
                 ("route", "GET", "/v1/models/fz-agent/route?sessionId={v}"),
                 ("exports", "POST", "/v1/exports/fz-agent?format=sft&minQuality={v}"),
                 ("exports", "POST", "/v1/exports/fz-agent?format=sft&since={v}"),
                 ("exports", "POST", "/v1/exports/fz-agent?format={v}"),
                 ("exports", "POST", "/v1/exports/fz-agent?format=sft&sftMinReward={v}"),
                 ("exports", "POST", "/v1/exports/fz-agent?format=dpo&dpoMinMargin={v}"),
                 ("exports", "POST", "/v1/exports/fz-agent?format=sft&allowPii={v}"),
                 ("lineage", "GET", "/v1/audit/lineage/model/fz-agent?version={v}"),
                 ("timeline", "GET", "/v1/audit/session/{s}/timeline?asOf={v}")]
        for route, m, t in templ:
            for v in bad:
                enc = requests.utils.quote(v, safe="%")
                self.send("query-" + route, m, t.format(s=sid, v=enc), t + " v=" + v[:20], ok503=False)

    def view(self, paths):
        return [(p, self.s.get(self.base + p, timeout=30).text) for p in paths]

    def run_existing(self):
        """Refused writes to entities that exist leave their views as they were (invariant c)."""
        specs = {r[0]: r for r in self.route_specs()}
        sid, agent = hexid("fz"), hexid("fz")
        self.send("events", "POST", f"/v1/sessions/{sid}/events", "seed existing", body={"agentId": "fz-agent", "events": [
            {"type": "message", "eventId": "m0", "role": "assistant", "content": "hello", "msgId": "resp-1"}]})
        self.send("versions", "POST", f"/v1/models/{agent}/versions", "seed existing",
                  body={"version": "v9", "artifact": "/tmp/none", "endpoint": "http://127.0.0.1:9/v1"})
        self.send("policy", "PUT", f"/v1/training/{agent}/policy", "seed existing", body={"trigger.min-samples": 7})
        targets = {"events": (sid, [f"/v1/sessions/{sid}", f"/v1/audit/session/{sid}?limit=1000"]),
                   "feedback": (sid, [f"/v1/sessions/{sid}", f"/v1/audit/session/{sid}?limit=1000"]),
                   "versions": (agent, [f"/v1/audit/model/{agent}?limit=1000"]),
                   "policy": (agent, [f"/v1/training/{agent}/policy", f"/v1/audit/coordinator/{agent}?limit=1000"])}
        for route, (ident, views) in targets.items():
            _, method, pathf, bodyf = specs[route]
            valid = bodyf(ident)
            if route == "versions":
                valid["version"] = "v9"  # registered: every accepted mutation is a duplicate or a 409
            if route == "events":
                valid["events"] = valid["events"][:-1]  # no result: the session stays open to every mutation
            before = self.view(views)
            for note, body in self.mutations(valid):
                r = self.send(route + "-existing", method, pathf(ident), note, body=body)
                if r is None:
                    continue
                after = self.view(views)
                if 400 <= r.status_code < 500 and after != before:
                    self.finding("changed", route + "-existing", note, r.status_code, r.text, "view changed after refusal")
                before = after

    def run_headers(self):
        odd = ["", " ", "a" * 5000, "a\tb", "../x", "%2F", "\u00e9t\u00e9", "a b", "13812345678", "x@y.com",
               "-", "null", "\u202e"]
        for v in odd:
            try:
                v.encode("latin-1")
            except UnicodeEncodeError:
                v = v.encode("utf-8").decode("latin-1")  # raw UTF-8 bytes in the header
            body = {"model": "default", "messages": [{"role": "user", "content": "hi"}]}
            for name in ["X-Session-Id", "X-Agent-Id"]:
                h = {"X-Session-Id": hexid("fz"), name: v} if name == "X-Agent-Id" else {name: v}
                self.send("chat-headers", "POST", "/v1/chat/completions", name + "=" + v[:20], body=body,
                          headers=h, gateway=True)
            self.send("actor-header", "POST", f"/v1/models/{hexid('fz')}/versions", "X-Actor=" + v[:20],
                      body={"version": "v1", "artifact": "/tmp/none", "endpoint": "http://127.0.0.1:9/v1"},
                      headers={"X-Actor": v})
            self.send("auth-header", "POST", f"/v1/sessions/{hexid('fz')}/events", "Authorization=" + v[:20],
                      body={"agentId": "fz-agent", "events": [{"type": "message", "role": "user", "content": "a"}]},
                      headers={"Authorization": v})

    def run_bodyless_writes(self):
        """Writes that take no body (or a form): a JSON body with fields, or odd bodies, is refused."""
        sid = hexid("fz")
        paths = [f"/v1/training/{sid}/trigger", f"/v1/jobs/{sid}/cancel", f"/v1/models/{sid}/versions/v1/promote",
                 f"/v1/models/{sid}/versions/v1/rollback", f"/v1/exports/{sid}?format=sft",
                 f"/v1/feedback/rate?sessionId={sid}&score=4", f"/v1/feedback/thumbs?sessionId={sid}&helpful=true"]
        for p in paths:
            for note, raw, hdr in self.raw_mutations({"reason": "x"}):
                self.send("bodyless", "POST", p, note + " " + p.split("?")[0], raw=raw, headers=hdr)
            for b in [{}, {"x": 1}, [], None, "s", 1]:
                self.send("bodyless", "POST", p, "body " + repr(b)[:20], raw=json.dumps(b).encode())
            for form in ["sessionId=x&sessionId=y", "score=4", "%zz", "score=4&zz=1", "a" * 2000 + "=1"]:
                self.send("bodyless", "POST", p, "form " + form[:20], raw=form.encode(),
                          headers={"Content-Type": "application/x-www-form-urlencoded"})

    def snapshot(self):
        views = {}
        for p in ["/v1/agents", "/v1/jobs", "/v1/training/fz-agent",
                  "/v1/audit/coordinator/fz-agent?limit=1000", "/v1/audit/model/fz-agent?limit=1000"]:
            r = self.s.get(self.base + p, timeout=30)
            views[p] = (r.status_code, r.text)
        m = self.s.get(self.base + "/metrics", timeout=30).text
        views["accepted_total"] = [l for l in m.splitlines() if l.startswith("otl_events_accepted_total")]
        return views

    def check_pii(self):
        # an OTLP 200 whose spans were all ignored or refused (partialSuccess) stored nothing: not an acknowledged write
        self.accepted = [(route, ident) for route, ident in self.accepted if route != "traces"
                         or self.s.get(self.base + f"/v1/sessions/{ident}", timeout=30).status_code == 200]
        for route, ident in self.accepted:
            if route in ("events", "feedback", "chat", "traces"):
                for p in [f"/v1/sessions/{ident}", f"/v1/audit/session/{ident}?limit=1000",
                          f"/v1/audit/session/{ident}/timeline"]:
                    r = self.s.get(self.base + p, timeout=30)
                    if EMAIL in r.text or PHONE in r.text or "4155552671" in r.text:
                        self.finding("pii", route, p, r.status_code, r.text)
        r = self.s.post(self.base + "/v1/exports/fz-agent?format=sft", timeout=120)  # the completed sessions
        if EMAIL in r.text or PHONE in r.text or "4155552671" in r.text:
            self.finding("pii", "exports", "/v1/exports/fz-agent?format=sft", r.status_code, "raw PII in the export")

    def check_durable(self):
        with open(os.path.join(self.out, "accepted.json")) as f:
            acc = json.load(f)
        lost = 0
        for route, ident in acc:
            if route in ("events", "feedback", "chat", "traces"):
                r = self.s.get(self.base + f"/v1/sessions/{ident}", timeout=30)
            elif route == "versions":
                r = self.s.get(self.base + f"/v1/audit/model/{ident}", timeout=30)
            elif route == "policy":
                r = self.s.get(self.base + f"/v1/training/{ident}/policy", timeout=30)
            else:
                continue
            if r.status_code != 200:
                lost += 1
                self.finding("lost", route, ident, r.status_code, r.text)
        print(f"durability: {len(acc)} acknowledged writes checked, {lost} missing")


def rebind_otlp(body, sid):
    try:
        for a in body["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"]:
            if a.get("key") == "gen_ai.conversation.id" and isinstance(a.get("value"), dict):
                a["value"] = {"stringValue": sid}
    except (KeyError, IndexError, TypeError, AttributeError):
        pass
    return body


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", default="http://127.0.0.1:8080")
    ap.add_argument("--out", default="./fuzz-out")
    ap.add_argument("--check-durable", action="store_true")
    ap.add_argument("--only", help="comma-separated routes of the body phase (events,feedback,versions,policy,chat,traces)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    f = Fuzz(a.base, a.out)
    f.only = set(a.only.split(",")) if a.only else None
    if a.check_durable:
        f.check_durable()
    elif f.only:
        f.run_body_mutations()
        f.check_pii()
        with open(os.path.join(a.out, "accepted.json"), "w") as out:
            json.dump(f.accepted, out)
    else:
        before = f.snapshot()
        f.run_methods()
        f.run_path_ids()
        f.run_queries()
        mid = f.snapshot()
        for k in before:
            if k not in ("/v1/agents",) and before[k] != mid[k] and k != "accepted_total":
                f.finding("changed", "global", k, 0, str(mid[k])[:600], "view changed by refused-only batch")
        f.run_body_mutations()
        f.run_existing()
        f.run_headers()
        f.run_bodyless_writes()
        f.check_pii()
        with open(os.path.join(a.out, "accepted.json"), "w") as out:
            json.dump(f.accepted, out)
    for route, c in sorted(f.counts.items()):
        print(f"{route:16} total {sum(c.values()):6}  " + "  ".join(f"{k}:{v}" for k, v in sorted(c.items(), key=str)))
    print(f"findings: {f.findings} (see {a.out}/findings.jsonl)")


if __name__ == "__main__":
    main()
