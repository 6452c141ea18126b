"""Drives the node's inference gateway with the official `openai` Python package, as docs/gateway.md shows.

usage: openai_gateway_check.py <node base URL, e.g. http://127.0.0.1:8080> <agent API key> <session id>

One conversation as an agent runs it: a call with tools (the model calls one), the tool's result sent
back in a streamed call, the streamed answer rated by its response id the moment the stream ends,
then the task result. Also the client's view of two refusals. The last line printed is a JSON report
for the Java test to assert on.
"""
import json
import sys
import urllib.error
import urllib.request

import openai
from openai import OpenAI

node, key, session = sys.argv[1], sys.argv[2], sys.argv[3]
client = OpenAI(base_url=node + "/v1", api_key=key, max_retries=0)
tools = [{"type": "function", "function": {
    "name": "get_weather", "description": "Current weather of a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
report = {}


def post(path, body):
    request = urllib.request.Request(node + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


messages = [{"role": "system", "content": "You answer weather questions."},
            {"role": "user", "content": "Use get_weather for Paris, I am jane@example.com"}]
raw = client.chat.completions.with_raw_response.create(
    model="default", messages=messages, tools=tools, extra_headers={"X-Session-Id": session})
first = raw.parse()
report["session_header"] = raw.headers.get("x-session-id")
report["version_header"] = raw.headers.get("x-model-version")
call = first.choices[0].message
report["tool_called"] = call.tool_calls[0].function.name if call.tool_calls else None
messages.append(call.model_dump(exclude_none=True))
for tc in call.tool_calls or []:
    messages.append({"role": "tool", "tool_call_id": tc.id, "content": json.dumps({"celsius": 21})})

text, response_id, usage = "", None, None
for chunk in client.chat.completions.create(model="default", messages=messages, tools=tools, stream=True,
                                            stream_options={"include_usage": True},
                                            extra_headers={"X-Session-Id": session}):
    response_id = chunk.id
    if chunk.usage:
        usage = chunk.usage.completion_tokens
    if chunk.choices and chunk.choices[0].delta.content:
        text += chunk.choices[0].delta.content
report["streamed_text"] = text
report["streamed_id"] = response_id
report["usage_completion_tokens"] = usage

# Rated at once, as a user clicking thumbs-up on the answer just shown.
report["feedback_status"], _ = post(f"/v1/sessions/{session}/feedback", {"kind": "THUMBS_UP", "msgId": response_id})
report["result_status"], _ = post(f"/v1/sessions/{session}/events",
                                  {"agentId": "py-agent", "events": [{"type": "result", "status": "SUCCESS"}]})

try:
    client.chat.completions.create(model="default", messages=[])
except openai.BadRequestError as e:
    report["bad_request"] = {"status": e.status_code, "code": e.code, "param": e.param}
try:
    OpenAI(base_url=node + "/v1", api_key="not-a-key", max_retries=0).chat.completions.create(
        model="default", messages=[{"role": "user", "content": "hi"}])
except openai.AuthenticationError as e:
    report["wrong_key"] = {"status": e.status_code, "code": e.code}
try:
    client.models.retrieve("gpt-4o-mini")
except openai.NotFoundError as e:
    report["unknown_model"] = {"status": e.status_code, "code": e.code, "param": e.param}
print(json.dumps(report))
