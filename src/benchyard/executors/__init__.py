"""Where a worker's attempts run: `local` (the worker's own process) or `ray` (tasks on a Ray
cluster); see executors/base.py for the interface and docs/distributed.md for Ray."""

from benchyard.executors.base import Executor, ExecutorOptions, ExecutorUnavailable
from benchyard.executors.registry import build_executor, executor_names

__all__ = [
    "Executor",
    "ExecutorOptions",
    "ExecutorUnavailable",
    "build_executor",
    "executor_names",
]
