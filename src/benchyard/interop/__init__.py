"""Runs in the formats other tools read, and runs made by other tools read into the store:

- `inspect_log`: a run as an Inspect AI evaluation log (`inspect view`, `read_eval_log`), and an
  Inspect log's samples and scores imported as a run, to be compared with benchyard's;
- `atif`: each attempt's trajectory in Harbor's Agent Trajectory Interchange Format;
- `jsonl`: one flat JSON object per try, for notebooks.
"""
