"""Chinese and emoji through the gateway with the official openai client (trial t102).

Args: base URL, agent id, session id prefix, text. Prints one JSON line (ASCII-escaped, so a lone
surrogate shows as \\udXXX): the answers the client got, streamed and not.
"""
import json
import sys

from openai import OpenAI

base, agent, prefix, text = sys.argv[1:5]
client = OpenAI(base_url=base + "/v1", api_key="unused", max_retries=0)
report = {}
for stream in (False, True):
    headers = {"X-Agent-Id": agent, "X-Session-Id": prefix + ("-stream" if stream else "-plain")}
    messages = [{"role": "user", "content": text}]
    if stream:
        chunks = client.chat.completions.create(model="default", messages=messages, stream=True, extra_headers=headers)
        answer = "".join((c.choices[0].delta.content or "") for c in chunks if c.choices)
    else:
        answer = client.chat.completions.create(model="default", messages=messages, extra_headers=headers) \
            .choices[0].message.content
    report["stream" if stream else "plain"] = answer
print(json.dumps(report))
