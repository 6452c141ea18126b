"""A two-turn agent with one tool call, instrumented with the OpenTelemetry Python SDK as the GenAI
semantic conventions describe, exported with the OTLP http/protobuf exporter (gzip) to a node.

Usage: otel_genai_agent.py <node base url> <bearer token> <conversation id>
Prints a JSON report as its last line: the exporter's result for the first and the repeated export.
"""
import json
import sys

from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode

base, token, conversation = sys.argv[1], sys.argv[2], sys.argv[3]


def text(role, content):
    return {"role": role, "parts": [{"type": "text", "content": content}]}


user1 = text("user", "Book a table for two, my number is +44 7700 900123.")
call = {"role": "assistant", "parts": [{"type": "tool_call", "id": "call-7", "name": "book_table",
                                        "arguments": {"people": 2}}]}
result = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call-7",
                                     "response": {"booked": True}}]}
answer1 = text("assistant", "Your table for two is booked.")
user2 = text("user", "Great, and a taxi?")
answer2 = text("assistant", "Sorry, taxis failed.")

memory = InMemorySpanExporter()
provider = TracerProvider(resource=Resource.create({"service.name": "python-booking-service"}))
provider.add_span_processor(SimpleSpanProcessor(memory))
tracer = provider.get_tracer("otl-python-agent")


def agent_span():
    return tracer.start_as_current_span("invoke_agent booking-agent", attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "booking-agent",
        "gen_ai.conversation.id": conversation})


def chat(inputs, outputs, response_id):
    with tracer.start_as_current_span("chat qwen2.5-7b-instruct", kind=SpanKind.CLIENT, attributes={
            "gen_ai.operation.name": "chat", "gen_ai.conversation.id": conversation,
            "gen_ai.request.model": "qwen2.5-7b-instruct", "gen_ai.response.id": response_id,
            "gen_ai.usage.input_tokens": 30, "gen_ai.usage.output_tokens": 8,
            "gen_ai.input.messages": json.dumps(inputs), "gen_ai.output.messages": json.dumps(outputs)}):
        pass


with agent_span():
    chat([user1], [call], "py-resp-1")
    with tracer.start_as_current_span("execute_tool book_table", attributes={
            "gen_ai.operation.name": "execute_tool", "gen_ai.conversation.id": conversation,
            "gen_ai.tool.name": "book_table", "gen_ai.tool.call.id": "call-7",
            "gen_ai.tool.call.arguments": json.dumps({"people": 2}),
            "gen_ai.tool.call.result": json.dumps({"booked": True})}):
        pass
    chat([user1, call, result], [answer1], "py-resp-2")
with agent_span():
    chat([user1, call, result, answer1, user2], [answer2], "py-resp-3")
    with tracer.start_as_current_span("execute_tool order_taxi", attributes={
            "gen_ai.operation.name": "execute_tool", "gen_ai.conversation.id": conversation,
            "gen_ai.tool.name": "order_taxi", "error.type": "ConnectionError"}) as taxi:
        taxi.set_status(Status(StatusCode.ERROR, "taxi service unreachable"))
provider.shutdown()

spans = memory.get_finished_spans()
exporter = OTLPSpanExporter(endpoint=base + "/v1/traces", headers={"Authorization": "Bearer " + token},
                            compression=Compression.Gzip, timeout=30)
first = exporter.export(spans)
again = exporter.export(spans)
exporter.shutdown()
print(json.dumps({"spans": len(spans), "first": first == SpanExportResult.SUCCESS,
                  "again": again == SpanExportResult.SUCCESS}))
