"""An agent on the official `openai` Python package that keeps a short context window, as docs/gateway.md says agents may.

usage: openai_window_check.py <node base URL, e.g. http://127.0.0.1:8080> <agent API key> <session id>

Each call sends the system prompt, the model's last answer and the new question; some questions are asked again
after the window has dropped their earlier occurrences. The last line printed is a JSON report: every message
the conversation had, in order, and the last answer's id, for the Java test to compare with the stored session.
"""
import json
import sys

from openai import OpenAI

node, key, session = sys.argv[1], sys.argv[2], sys.argv[3]
client = OpenAI(base_url=node + "/v1", api_key=key, max_retries=0)
system = {"role": "system", "content": "Answer briefly."}
said = [["system", system["content"]]]
last_answer = None
for question in ["alpha", "beta", "gamma", "alpha", "beta", "alpha"]:
    window = [system] + ([{"role": "assistant", "content": last_answer}] if last_answer is not None else [])
    window.append({"role": "user", "content": question})
    said.append(["user", question])
    completion = client.chat.completions.create(model="default", messages=window, extra_headers={"X-Session-Id": session})
    answer = completion.choices[0].message.content
    said.append(["assistant", answer])
    last_answer = answer
print(json.dumps({"said": said, "last_id": completion.id}))
