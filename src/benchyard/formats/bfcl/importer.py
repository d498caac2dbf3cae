"""BFCL v4 single-turn categories (`BFCL_v4_<category>.json`, with `possible_answer/` beside it):
simple, multiple, parallel, parallel_multiple, irrelevance (and their `live_` versions). The source
is one question file or a directory of them.

Each question becomes a tool-use scenario whose tools are the question's functions (JSON Schema;
`.` in a name written `_`, as tool names allow; each call answered with a neutral result), graded
by `function_call_ast` on the calls benchyard observed, with BFCL's AST semantics. With
`--option mode=prompt`, the functions are listed in the system prompt instead and the calls are
read from the answer's text, as BFCL grades prompt-mode models. The reference makes the calls of
the possible answers (each parameter's first acceptable value; optional ones left out), so
`verify` runs them through the checker; irrelevance scenarios are negative (no call is right).
"""

from __future__ import annotations

import json
import re
from functools import partial
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from benchyard.importers.base import (
    BaseImporter,
    Imported,
    ImportedScenario,
    ImportOptions,
    ProblemList,
    message_stimulus,
)
from benchyard.importers.source import Fields, read_records, record_scenarios

FILE_NAME = re.compile(r"^BFCL_v\d+_(?P<category>[a-z_]+)\.json$")
CATEGORIES = {
    "simple_python": "simple",
    "multiple": "multiple",
    "parallel": "parallel",
    "parallel_multiple": "parallel_multiple",
    "irrelevance": "irrelevance",
    "live_simple": "simple",
    "live_multiple": "multiple",
    "live_parallel": "parallel",
    "live_parallel_multiple": "parallel_multiple",
    "live_irrelevance": "irrelevance",
}
"""BFCL's categories this importer reads, and the checker each one uses."""
JSON_TYPES = {
    "string": "string",
    "integer": "integer",
    "float": "number",
    "boolean": "boolean",
    "array": "array",
    "tuple": "array",
    "dict": "object",
}
TOOL_RESULT = "The call was recorded."
NO_CALL_ANSWER = "None of the functions applies to this request."
PROMPT_MODE_SYSTEM = (
    "You compose function calls. You are given a question and a set of functions. Make the calls "
    "that achieve the question's purpose. If none of the functions can be used, or the question "
    "lacks parameters a function requires, say so and call nothing.\n\n"
    "To call functions, reply with only this, and no other text:\n"
    "[func_name1(param_name1=value1, param_name2=value2), func_name2(param=value)]\n\n"
    "The functions, in JSON:\n{functions}\n"
)


class BfclOptions(ImportOptions):
    mode: Literal["fc", "prompt"] = Field(
        default="fc",
        description="fc: the functions are tools and the observed calls are graded; prompt: the "
        "functions are in the system prompt and the calls written in the answer are graded.",
    )
    answers: str | None = Field(
        default=None,
        description="The possible-answer file (one question file) or directory (default: "
        "possible_answer/ beside the questions).",
    )


def tool_name(name: str) -> str:
    return name.replace(".", "_")


def json_schema(bfcl: dict[str, Any]) -> dict[str, Any]:
    """A BFCL parameter document as JSON Schema (`dict` is `object`, `float` is `number`, `tuple`
    is `array`, `any` has no type)."""
    schema: dict[str, Any] = {}
    for key, value in bfcl.items():
        if key == "type":
            if value in JSON_TYPES:
                schema["type"] = JSON_TYPES[value]
        elif key == "properties" and isinstance(value, dict):
            schema["properties"] = {
                name: json_schema(item) if isinstance(item, dict) else item
                for name, item in value.items()
            }
        elif key == "items" and isinstance(value, dict):
            schema["items"] = json_schema(value)
        elif key in ("description", "enum", "required", "default", "minimum", "maximum"):
            schema[key] = value
    if schema.get("type") == "object":
        schema.setdefault("properties", {})
    return schema


def _first(options: Any) -> Any:
    """A parameter's first acceptable value, with the option lists inside it unwrapped."""
    if not isinstance(options, list):
        return None
    for option in options:
        if option != "":
            return _unwrap(option)
    return None


def _unwrap(value: Any) -> Any:
    if isinstance(value, dict):
        out = {}
        for key, options in value.items():
            if isinstance(options, list):
                chosen = _first(options)
                if chosen is not None:
                    out[key] = chosen
            else:
                out[key] = options
        return out
    if isinstance(value, list):
        return [_unwrap(item) for item in value]
    return value


def reference_calls(
    functions: list[dict[str, Any]], ground_truth: list[dict[str, dict[str, list[Any]]]]
) -> list[tuple[str, dict[str, Any]]]:
    """The calls of the possible answers: each parameter the schema knows, with its first
    acceptable value, optional ones (`""` acceptable) left out unless the schema requires them."""
    calls = []
    for expected in ground_truth:
        name, possible = next(iter(expected.items()))
        function = next((f for f in functions if f.get("name") == name), {})
        parameters = function.get("parameters") or {}
        known = parameters.get("properties") or {}
        required = set(parameters.get("required") or [])
        arguments = {}
        for param, options in possible.items():
            if param not in known:
                continue
            if "" in options and param not in required:
                continue
            value = _first(options)
            if value is not None:
                arguments[param] = value
        calls.append((name, arguments))
    return calls


def python_call(name: str, arguments: dict[str, Any]) -> str:
    return f"{name}({', '.join(f'{key}={value!r}' for key, value in arguments.items())})"


class BfclImporter(BaseImporter):
    name = "bfcl"
    format_version = "4"
    summary = "BFCL v4 simple/multiple/parallel/parallel_multiple/irrelevance: the AST checker"
    source_kind = "any"
    options = BfclOptions

    def read(self, source: Path, options: Any) -> Imported:
        assert isinstance(options, BfclOptions)
        problems = ProblemList()
        files = self._question_files(source, problems)
        scenarios: list[ImportedScenario] = []
        for file, category in files:
            answers = self._answers(file, source, options, category, problems)
            scenario = partial(self._scenario, category=category, answers=answers, options=options)
            scenarios += record_scenarios(file, category, problems, scenario)
        problems.raise_if_any()
        return Imported(
            name="bfcl",
            version="4",
            description="BFCL v4 single-turn function calling ("
            + ", ".join(sorted({category for _, category in files}))
            + f"), graded by the AST checker ({options.mode} mode).",
            scenarios=scenarios,
        )

    def _question_files(self, source: Path, problems: ProblemList) -> list[tuple[Path, str]]:
        candidates = sorted(source.glob("BFCL_v*_*.json")) if source.is_dir() else [source]
        found = []
        for file in candidates:
            match = FILE_NAME.match(file.name)
            category = match["category"] if match else None
            if category in CATEGORIES:
                found.append((file, category))
            elif not source.is_dir():
                problems.add(
                    file,
                    None,
                    "",
                    "not a BFCL question file of a supported category (BFCL_v4_<category>.json, "
                    f"category one of {', '.join(CATEGORIES)})",
                )
        if source.is_dir() and not found:
            problems.add(source, None, "", "holds no BFCL_v4_<category>.json question file")
        return found

    def _answers(
        self, file: Path, source: Path, options: BfclOptions, category: str, problems: ProblemList
    ) -> dict[str, list[Any]]:
        if CATEGORIES[category] == "irrelevance":
            return {}
        if options.answers is None:
            answer_file = file.parent / "possible_answer" / file.name
        else:
            given = Path(options.answers)
            given = given if given.is_absolute() else source.parent / given
            answer_file = given / file.name if given.is_dir() else given
        if not answer_file.is_file():
            problems.add(file, None, "", f"no possible answers: {answer_file} does not exist")
            return {}
        answers: dict[str, list[Any]] = {}
        for record in read_records(answer_file, problems):
            fields = Fields(record, problems)
            identifier = fields.get("id", str)
            truth = fields.get("ground_truth", list)
            if truth is not None and not all(
                isinstance(call, dict)
                and len(call) == 1
                and all(isinstance(args, dict) for args in call.values())
                for call in truth
            ):
                fields.problem("ground_truth", "expected a list of {function: {param: [values]}}")
                continue
            if identifier is not None and truth is not None:
                answers[identifier] = truth
        return answers

    def _scenario(
        self, fields: Fields, category: str, answers: dict[str, list[Any]], options: BfclOptions
    ) -> dict[str, Any] | None:
        identifier = fields.get("id", str)
        question = fields.get("question", list)
        functions = fields.get("function", list)
        checker = CATEGORIES[category]
        if question is not None and (len(question) != 1 or not isinstance(question[0], list)):
            fields.problem("question", "only single-turn questions are supported (one turn)")
        if functions is not None and not all(
            isinstance(f, dict) and isinstance(f.get("name"), str) for f in functions
        ):
            fields.problem("function", "expected a list of function documents with a name")
        truth = answers.get(identifier or "") if checker != "irrelevance" else []
        if checker != "irrelevance" and identifier is not None and truth is None:
            fields.problem("id", f"no possible answer for {identifier}")
        if not fields.ok:
            return None
        assert identifier and question is not None and functions is not None and truth is not None
        messages = question[0]
        system = "\n\n".join(m.get("content", "") for m in messages if m.get("role") == "system")
        user = "\n\n".join(m.get("content", "") for m in messages if m.get("role") != "system")
        check: dict[str, Any] = {
            "type": "function_call_ast",
            "category": checker,
            "functions": functions,
        }
        if checker != "irrelevance":
            check["ground_truth"] = truth
        data: dict[str, Any] = {
            "id": identifier,
            "category": category,
            "tags": ["bfcl", checker],
        }
        calls = reference_calls(functions, truth) if checker != "irrelevance" else []
        if options.mode == "prompt":
            check["source"] = "answer"
            listed = PROMPT_MODE_SYSTEM.format(functions=json.dumps(functions, ensure_ascii=False))
            system = listed + (f"\n{system}" if system else "")
            data["stimulus"] = message_stimulus(user, system)
            data["reference"] = (
                "[" + ", ".join(python_call(n, a) for n, a in calls) + "]"
                if calls
                else NO_CALL_ANSWER
            )
        else:
            data["stimulus"] = message_stimulus(user, system)
            data["tools"] = [
                {
                    "name": tool_name(f["name"]),
                    "description": str(f.get("description", "")),
                    "parameters": json_schema(f.get("parameters") or {"type": "dict"}),
                    "result": TOOL_RESULT,
                }
                for f in functions
            ]
            data["reference"] = {
                "answer": NO_CALL_ANSWER if not calls else "Done.",
                "tool_calls": [{"name": tool_name(n), "arguments": a} for n, a in calls],
            }
        data["checks"] = [check]
        if checker == "irrelevance":
            data["negative"] = True
        return data


IMPORTER = BfclImporter()
