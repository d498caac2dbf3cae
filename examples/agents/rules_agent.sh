#!/usr/bin/env bash
# A smaller, bash-only cousin of rules_agent.py for benchyard's command-agent protocol
# (see docs/agent-protocol.md). No model: a few general rules on the current user turn.
#
#   benchyard run starter --agent-cmd 'bash examples/agents/rules_agent.sh' --filter difficulty:easy
set -u
q=$(cat "$BENCHYARD_INSTRUCTION_FILE")
log() { [ -n "${BENCHYARD_TRAJECTORY_FILE:-}" ] && printf '{"kind": "log", "content": "rule: %s"}\n' "$1" >>"$BENCHYARD_TRAJECTORY_FILE"; }
say() { printf '%s\n' "$1"; exit 0; }
first_sentence() { tr '\n' ' ' | sed -E 's/^ +//; s/([.!?]) .*/\1/; s/ +$//'; }

# recall: "What ... did I ask you to remember?" -> X from an earlier "Remember the code word X"
if grep -qiE 'what .*remember' <<<"$q"; then
  word=$(grep -oE '[Rr]emember the ([a-z]+ ){0,2}[A-Z0-9][A-Za-z0-9_-]*' "$BENCHYARD_MESSAGES_FILE" | tail -n1 | awk '{print $NF}')
  [ -n "$word" ] && { log recall; say "$word"; }
fi
# one word: "Reply with only the word X" -> X
word=$(grep -oiE 'reply with only the word [A-Za-z0-9_-]+' <<<"$q" | head -n1 | awk '{print $NF}')
[ -n "$word" ] && { log "one word"; say "$word"; }
# repeat: "Repeat the following sentence exactly[, in upper/lowercase]: TEXT"
if grep -qiE 'repeat (the following|this)[^:]*:' <<<"$q"; then
  text=$(sed -E '0,/:/s/^[^:]*: *//' <<<"$q")
  case "$q" in
    *uppercase:*) text=$(tr '[:lower:]' '[:upper:]' <<<"$text") ;;
    *lowercase:*) text=$(tr '[:upper:]' '[:lower:]' <<<"$text") ;;
  esac
  log repeat; say "$text"
fi
# json: a JSON object in the question; "..." placeholders are filled (email only), else echoed
json=$(grep -oE '\{.*\}' <<<"$q" | head -n1)
if [ -n "$json" ] && grep -qi json <<<"$q"; then
  if [ "$json" = '{"email": "..."}' ]; then
    email=$(grep -oE '[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}' <<<"$q" | head -n1)
    log json; say "{\"email\": $([ -n "$email" ] && echo "\"$email\"" || echo null)}"
  elif ! grep -q '\.\.\.' <<<"$json"; then
    log json; say "$json"
  fi
fi
# json keys: 'key "k" set to VALUE' -> {"k": VALUE, ...}
pairs=$(grep -oE 'key "[^"]+" set to ("[^"]*"|-?[0-9.]+|true|false|null)' <<<"$q" | sed -E 's/^key ("[^"]+") set to /\1: /' | paste -sd, -)
[ -n "$pairs" ] && { log "json keys"; say "{$pairs}"; }
# summarise: the first sentence of the named file, or of the text after the first blank line
if grep -qiE 'summari[sz]e' <<<"$q"; then
  for name in $(grep -oE '[A-Za-z0-9_.-]+\.(txt|md)' <<<"$q"); do
    [ -f "$name" ] && { log summarise; say "$(first_sentence <"$name")"; }
  done
  log summarise; say "$(sed '1,/^[[:space:]]*$/d' <<<"$q" | first_sentence)"
fi
# arithmetic: the longest expression of digits, + - * / and parentheses
expr=$(grep -oE '[0-9(][0-9 ()+*/-]*[0-9)]' <<<"$q" | grep -E '[0-9)] *[-+*/] *[0-9(]' | awk '{ print length, $0 }' | sort -rn | head -n1 | cut -d' ' -f2-)
if [ -n "$expr" ] && value=$( (echo $(( $expr ))) 2>/dev/null ); then
  log arithmetic; say "$value"
fi
log none; say "I don't know."
