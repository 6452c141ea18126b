"""Reads a job's exported datasets the way the trainer does: Hugging Face `datasets` and `transformers`.

usage: hf_dataset_formats_check.py --sft PATH NAME SPLIT FILE [--dpo PATH NAME SPLIT FILE]
                                   [--rl PATH NAME SPLIT FILE] [--eval PATH NAME SPLIT FILE]
                                   [--sft-held PATH NAME SPLIT FILE --sft-held-eval PATH NAME SPLIT FILE]

PATH, NAME and SPLIT are what the node rendered into the job's Trinity-RFT config (buffer ... path /
subset_name / split; NAME "-" when it rendered none), FILE the exported JSON Lines file those rows must
come from. Every dataset is loaded exactly as Trinity-RFT's file reader does
(trinity/buffer/reader/file_reader.py): load_dataset(PATH, name=NAME, split=SPLIT), and must hold
exactly FILE's rows, in order. --sft-held is an SFT job with a held-out set: its folder holds an
SFT-shaped train.jsonl and an RL-shaped test.jsonl, and each must load alone. Every SFT
row is rendered with apply_chat_template(messages, tools=tools, tokenize=False) on a tiny tokenizer
built here (a WordLevel model, no download) whose chat template iterates the tools and reads each
tool call's `arguments` as a mapping, as real tool-calling templates do, and split as Trinity-RFT's
SFTFormatter splits it (trinity/buffer/schema/formatter.py, messages not concatenated): the prompt is
apply_chat_template(messages[:-1], add_generation_prompt=True), the trained response the rest, which
must be an assistant turn that says something or calls a tool. A failed check exits
non-zero with the reason; the last line printed is a JSON report.
"""
import argparse
import json
import os

# Caches stay in the working directory the test gives (its own temp dir under target/).
os.environ.setdefault("HF_HOME", os.path.join(os.getcwd(), "hf-home"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")

from datasets import load_dataset  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: E402
from transformers import PreTrainedTokenizerFast  # noqa: E402

# A tool-calling template in the style of the common open models: tools listed up front, each call
# rendered from `function.name` and the items of `function.arguments` (a mapping; a JSON string
# has no .items() and fails here, as it does in those templates).
CHAT_TEMPLATE = (
    "{%- if tools %}<tools>{% for tool in tools %}"
    "[{{ tool.type }}:{{ tool.function.name }}"
    "{% for pname in tool.function.parameters.properties %} {{ pname }}{% endfor %}]"
    "{% endfor %}</tools>\n{% endif %}"
    "{%- for m in messages %}<|{{ m.role }}|>"
    "{%- if m.content %}{{ m.content }}{% endif %}"
    "{%- if m.tool_calls %}{% for call in m.tool_calls %}"
    "<call id={{ call.id }}>{{ call.function.name }}("
    "{%- for key, value in call.function.arguments.items() %}{% if value is not none %}"
    "{{ key }}={{ value | tojson }};{% endif %}{% endfor %})</call>"
    "{% endfor %}{% endif %}"
    "{%- if m.tool_call_id %}<result for={{ m.tool_call_id }}>{% endif %}\n"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}<|assistant|>{% endif %}"
)


def check(condition, what):
    if not condition:
        raise AssertionError(what)


def tiny_tokenizer():
    vocab = {"[UNK]": 0, "[PAD]": 1, "hello": 2}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]")
    fast.chat_template = CHAT_TEMPLATE
    return fast


def raw_lines(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def load(source):
    path, name, split, file = source
    name = None if name == "-" else name
    # Trinity's reader: load_dataset(meta.path, name=meta.subset_name, split=meta.split).
    ds = load_dataset(path, name=name, split=split)
    raw = raw_lines(file)
    check(len(ds) == len(raw),
          f"load_dataset({path!r}, name={name!r}, split={split!r}) has {len(ds)} rows, {file} {len(raw)} lines")
    return ds, raw


def check_sft(source, tokenizer, report, name="sft"):
    ds, raw = load(source)
    check(len(ds) == len(raw) and len(ds) > 0, f"SFT rows {len(ds)} vs lines {len(raw)}")
    check({"messages", "tools"} <= set(ds.column_names), f"SFT columns {ds.column_names}")
    rendered = calls = tools_listed = 0
    for i, row in enumerate(ds):
        messages, tools = row["messages"], row["tools"]
        check(isinstance(tools, list), f"row {i}: tools is {type(tools).__name__}, not a list")
        for tool in tools:
            check(isinstance(tool, dict) and tool["type"] == "function", f"row {i}: tool {tool!r}")
        roles = [m["role"] for m in messages]
        for a, b in zip(roles, roles[1:]):
            check(not (a == "assistant" and b == "assistant"), f"row {i}: two assistant messages in a row {roles}")
        text = tokenizer.apply_chat_template(messages, tools=tools, tokenize=False)
        check(isinstance(text, str) and text, f"row {i}: nothing rendered")
        # What was exported is what the template shows: every tool, every call with its arguments.
        for tool in raw[i]["tools"]:
            check(f"[function:{tool['function']['name']}" in text, f"row {i}: tool {tool['function']['name']} missing")
            tools_listed += 1
        for m in raw[i]["messages"]:
            for call in m.get("tool_calls") or []:
                args = call["function"]["arguments"]
                check(isinstance(args, dict), f"row {i}: exported arguments {args!r} are not an object")
                check(f"{call['function']['name']}(" in text, f"row {i}: call {call['function']['name']} missing")
                for key, value in args.items():
                    shown = f"{key}={json.dumps(value, ensure_ascii=False)};"
                    check(shown in text, f"row {i}: argument {shown} not rendered in {text!r}")
                calls += 1
            if m["role"] != "tool" and m.get("content"):
                check(m["content"] in text, f"row {i}: content {m['content']!r} not rendered")
        check_trained_turn(i, messages, tools, text, tokenizer)
        ids = tokenizer.apply_chat_template(messages, tools=tools, tokenize=True)
        check(len(ids) > 0, f"row {i}: no tokens")
        rendered += 1
    report[f"{name}_rows"] = len(ds)
    report[f"{name}_rendered"] = rendered
    report[f"{name}_tool_calls_rendered"] = calls
    report[f"{name}_tools_listed"] = tools_listed


def check_trained_turn(i, messages, tools, text, tokenizer):
    """Trinity's SFTFormatter learns the last message, prompted by all the ones before it."""
    last = messages[-1]
    check(last["role"] == "assistant", f"row {i}: the trained (last) message is a {last['role']} message")
    check((last.get("content") or "").strip() or last.get("tool_calls"),
          f"row {i}: the trained (last) assistant message says nothing: {last!r}")
    try:
        prompt = tokenizer.apply_chat_template(messages[:-1], tools=tools, add_generation_prompt=True, tokenize=False)
    except Exception as e:  # noqa: BLE001 - transformers refuses an empty conversation (ValueError)
        raise AssertionError(f"row {i}: the prompt before the trained turn does not render: {e}") from e
    check(text.startswith(prompt), f"row {i}: the prompt {prompt!r} is no prefix of the row {text!r}")
    check(text[len(prompt):].strip(), f"row {i}: nothing left to train after the prompt")


def check_dpo(source, tokenizer, report):
    """Each pair as Trinity-RFT's DPOFormatter (prompt_type messages) renders it: the shared
    conversation with a generation prompt, then each side after it; the side must say its answer."""
    ds, raw = load(source)
    texts = ("prompt", "chosen", "rejected")
    check(set(ds.column_names) == {*texts, "messages", "chosen_messages", "rejected_messages", "metadata"},
          f"DPO columns {ds.column_names}")
    for i, row in enumerate(ds):
        for k in texts:
            check(isinstance(row[k], str) and row[k] and row[k] == raw[i][k], f"DPO row {i}: {k} {row[k]!r}")
        meta = row["metadata"]
        check(meta == raw[i]["metadata"] and meta["chosenSessionId"] and meta["rejectedSessionId"]
              and meta["chosenSessionId"] != meta["rejectedSessionId"],
              f"DPO row {i}: the metadata does not name two sessions: {meta!r}")
        check(any(m["role"] == "user" and m["content"] for m in row["messages"]),
              f"DPO row {i}: the shared conversation asks nothing: {row['messages']!r}")
        prompt = tokenizer.apply_chat_template(row["messages"], add_generation_prompt=True, tokenize=False)
        for side, answer in (("chosen_messages", row["chosen"]), ("rejected_messages", row["rejected"])):
            turns = row[side]
            check(len(turns) == len(raw[i][side]), f"DPO row {i}: {side} reads back as {turns!r}")
            check(turns[0]["role"] == "assistant" and turns[-1]["role"] == "assistant"
                  and turns[-1]["content"].endswith(answer), f"DPO row {i}: {side} {turns!r}")
            text = tokenizer.apply_chat_template(row["messages"] + turns, tokenize=False)
            check(text.startswith(prompt) and answer in text[len(prompt):],
                  f"DPO row {i}: {side} does not follow the prompt as rendered: {text!r}")
            report["dpo_turns"] = report.get("dpo_turns", 0) + len(turns)
    report["dpo_rows"] = len(ds)


def check_rl(source, report, name="rl"):
    ds, raw = load(source)
    check({"prompt", "reward", "reference", "metadata"} <= set(ds.column_names), f"RL columns {ds.column_names}")
    for i, row in enumerate(ds):
        check(isinstance(row["reward"], float), f"RL row {i}: reward {row['reward']!r} is not a float")
        check(row["reward"] == raw[i]["reward"] and row["prompt"] == raw[i]["prompt"], f"RL row {i} differs")
        check(row["metadata"]["sessionId"] == raw[i]["metadata"]["sessionId"], f"RL row {i}: metadata differs")
        # The system prompt the rendered config hands the rollouts (format.system_prompt) is read from here.
        check(row.get("system") == raw[i].get("system"), f"RL row {i}: system {row.get('system')!r} differs")
    report[f"{name}_rows"] = len(ds)
    report[f"{name}_systems"] = sorted({r.get("system") or "" for r in raw})
    report[f"{name}_rewards"] = sorted(ds["reward"])


def main(sft, dpo, rl, held_out, sft_held, sft_held_eval):
    import datasets
    import transformers

    report = {"datasets": datasets.__version__, "transformers": transformers.__version__}
    tokenizer = tiny_tokenizer()
    check_sft(sft, tokenizer, report)
    if dpo:
        check_dpo(dpo, tokenizer, report)
    if rl:
        check_rl(rl, report)
    if held_out:
        check_rl(held_out, report, "eval")
    if sft_held:
        check_sft(sft_held, tokenizer, report, "sft_held")
    if sft_held_eval:
        check_rl(sft_held_eval, report, "sft_held_eval")
    # The shape the exporter fixed this for: a JSON-string `tools` is refused by transformers itself.
    try:
        tokenizer.apply_chat_template([{"role": "user", "content": "hi"}], tools="[]", tokenize=False)
        report["string_tools_refused"] = False
    except Exception as e:  # noqa: BLE001 - the exact type is transformers' business
        report["string_tools_refused"] = True
        report["string_tools_error"] = type(e).__name__
    print(json.dumps(report))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(usage=__doc__)
    parser.add_argument("--sft", nargs=4, required=True, metavar=("PATH", "NAME", "SPLIT", "FILE"))
    for kind in ("dpo", "rl", "eval", "sft-held", "sft-held-eval"):
        parser.add_argument(f"--{kind}", nargs=4, metavar=("PATH", "NAME", "SPLIT", "FILE"))
    args = parser.parse_args()
    main(args.sft, args.dpo, args.rl, args.eval, args.sft_held, args.sft_held_eval)
