"""The store's tables (SQLAlchemy Core). Change them only together with a new Alembic migration."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()

runs = Table(
    "runs",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("status", String(16), nullable=False),
    Column("benchmark_name", String(200), nullable=False),
    Column("benchmark_version", String(100), nullable=False),
    Column("benchmark_hash", String(80), nullable=False),
    Column("benchmark_path", Text, nullable=False),
    Column("agent_name", String(200), nullable=False),
    Column("agent_config", JSON, nullable=False),
    Column("agent_commit", String(64)),
    Column("agent_dirty", Boolean),
    Column("agent_diff_hash", String(80)),  # sha256 of the uncommitted diff when dirty
    Column("agent_repo", Text),
    Column("settings", JSON, nullable=False),
    Column("benchyard_version", String(40), nullable=False),
    Column("host", String(200), nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("finished_at", DateTime(timezone=True)),
    Column("parent_run_id", String(32), ForeignKey("runs.id")),
    Column("planned_attempts", Integer, nullable=False),
    Column("status_reason", Text),  # why a run failed or was cancelled
    Column("rescored_from", String(32)),  # the run whose recorded outputs this one re-graded
    # benchmark (attempts) | speed (`benchyard speed`: rows in speed_samples, no attempts)
    Column("kind", String(16), nullable=False, server_default="benchmark"),
    Index("ix_runs_started_at", "started_at"),
)

attempts = Table(
    "attempts",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("run_id", String(32), ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("scenario_id", String(200), nullable=False),
    Column("category", String(200), nullable=False),
    Column("epoch", Integer, nullable=False),
    Column("try_number", Integer, nullable=False),
    Column("superseded", Boolean, nullable=False),
    Column("verdict", String(16), nullable=False),
    Column("score", Float, nullable=False),
    Column("cause", Text),
    Column("failure_kind", String(40)),
    Column("negative", Boolean, nullable=False),
    Column("answer", Text),
    Column("stdout", Text),
    Column("stderr", Text),
    Column("stdout_dropped_bytes", Integer, nullable=False),
    Column("stderr_dropped_bytes", Integer, nullable=False),
    Column("trajectory", LargeBinary),
    Column("patch", LargeBinary),  # zlib-compressed unified diff of the workdir
    Column("turns", Integer, nullable=False),
    Column("user_turns", Integer, nullable=False, server_default="1"),  # scripted by the stimulus
    Column("hit_max_turns", Boolean, nullable=False),
    Column("tokens_in", Integer, nullable=False),
    Column("tokens_out", Integer, nullable=False),
    Column("cost_usd", Float),
    Column("judge_tokens_in", Integer, nullable=False, server_default="0"),
    Column("judge_tokens_out", Integer, nullable=False, server_default="0"),
    Column("judge_cost_usd", Float),  # the judge model's calls, costed apart from the agent
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("finished_at", DateTime(timezone=True), nullable=False),
    Column("duration_sec", Float, nullable=False),
    Column("answers", JSON(none_as_null=True)),  # every turn's answer of multi-turn attempts
    Column("threshold", Float),  # the scenario's pass threshold on the score, if any
    Column("node", String(200)),  # the machine (and Ray node) the try ran on
    # stdout, stderr and the answer, zlib-compressed, each once (store/outputs.py); rows from
    # before it keep them in the text columns above
    Column("outputs", LargeBinary),
    # the scenario's own content hash when it ran (spec/hashing.py, scenario_hash): compare pairs
    # only unchanged scenarios; NULL in rows from before it (the run's benchmark_hash decides)
    Column("scenario_hash", String(71)),
    Index("ix_attempts_run_final", "run_id", "superseded", "scenario_id", "epoch"),
)

check_results = Table(
    "check_results",
    metadata,
    Column(
        "attempt_id", String(32), ForeignKey("attempts.id", ondelete="CASCADE"), primary_key=True
    ),
    Column("position", Integer, primary_key=True),
    Column("check_type", String(100), nullable=False),
    Column("label", String(200), nullable=False),
    Column("passed", Boolean, nullable=False),
    Column("score", Float, nullable=False),
    Column("weight", Float, nullable=False),
    Column("reason", Text, nullable=False),
    Column("threshold", Float),  # the check's own pass threshold on its score, if any
    Column("details", JSON(none_as_null=True)),  # a check's structured figures, if any
)

attempt_queue = Table(
    "attempt_queue",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(32), ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("scenario_id", String(200), nullable=False),
    Column("epoch", Integer, nullable=False),
    Column("state", String(16), nullable=False),  # queued | claimed | done | cancelled
    Column("tries", Integer, nullable=False),  # tries written so far
    # times a worker started running it (not counting a worker that stopped cleanly mid-run):
    # each earlier start ended with its worker lost (runner/worker.py, MAX_LOST_WORKERS)
    Column("claims", Integer, nullable=False),
    Column("worker", String(120)),  # the worker holding the claim
    Column("worker_node", String(200)),  # host, boot and pid namespace of that worker
    Column("worker_pid", Integer),
    Column("lease_expires_at", DateTime(timezone=True)),
    Column("node", String(200)),  # the Ray node a claimed attempt runs on, once it started
    # when its worker's watchdog found it stuck (cancelled and still running): another worker
    # may take it back (runner/watchdog.py)
    Column("stuck_since", DateTime(timezone=True)),
    UniqueConstraint("run_id", "scenario_id", "epoch", name="uq_attempt_queue_attempt"),
    Index("ix_attempt_queue_state", "state", "id"),
    Index("ix_attempt_queue_worker", "worker"),
)

run_resumes = Table(
    "run_resumes",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(32), ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("at", DateTime(timezone=True), nullable=False),
    Column("action", String(16), nullable=False),  # requeued | failed
    Column("lost_worker", String(120), nullable=False),
    Column("cause", Text, nullable=False),
    Column("by_worker", String(120), nullable=False),
    Column("kept", Integer, nullable=False),  # finished attempts kept
    Column("requeued", Integer, nullable=False),  # unfinished attempts put back (or cancelled)
    Index("ix_run_resumes_run", "run_id"),
)

speed_samples = Table(
    "speed_samples",
    metadata,
    Column("run_id", String(32), ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("phase", String(16), nullable=False),  # warmup | length | probe | concurrency
    Column("label", String(40), nullable=False),  # short, medium, long; c16 for a level
    Column("prompt_words", Integer, nullable=False),
    Column("prompt_key", String(40), nullable=False),  # the same key: the same prompt text
    Column("concurrency", Integer, nullable=False),
    Column("started_sec", Float, nullable=False),  # request written, from its batch's start
    Column("sent_sec", Float),  # the client's time to write the request out
    Column("total_sec", Float),  # request sent to the reply complete
    Column("ttft_sec", Float),  # to the first token (reasoning, content or tool call)
    Column("reasoning_ttft_sec", Float),
    Column("content_ttft_sec", Float),
    Column("last_token_sec", Float),
    Column("token_chunks", Integer, nullable=False),
    Column("tokens_in", Integer),
    Column("tokens_out", Integer),
    Column("reasoning_tokens", Integer),
    Column("usage_source", String(16), nullable=False),  # stream | twin | twin_differs | none
    Column("retries", Integer, nullable=False),
    Column("error", Text),
    Column("reply_chars", Integer),  # the reply's characters and words, counted by benchyard
    Column("reply_words", Integer),
    Column("expected_words", Integer),  # its words that an answer on topic uses
    Column("tokenizer_tokens", Integer),  # its tokens by the server's own tokenizer, if any
    Column("client_lag_sec", Float),  # the client's event loop's longest lag during the call
    Column("retakes", Integer, nullable=False, server_default="0"),  # stalled takes discarded
)

# ---- automation (src/benchyard/automation/): proposals, schedules, webhooks ---------------------

proposals = Table(
    "proposals",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("kind", String(16), nullable=False),  # create | update
    Column("status", String(16), nullable=False),  # pending | accepted | rejected
    Column("benchmark_name", String(200), nullable=False),
    Column("benchmark_root", Text, nullable=False),  # the directory written on acceptance
    Column("base_hash", String(80)),  # the benchmark's content hash when proposed (update)
    Column("title", Text, nullable=False),
    Column("rationale", Text, nullable=False),
    Column("changes", JSON, nullable=False),  # [{path, before_sha256, before, after}]
    Column("summary", JSON, nullable=False),  # {added, changed, removed: [ids], files: [paths]}
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("created_by", String(200), nullable=False),
    Column("decided_at", DateTime(timezone=True)),
    Column("decided_by", String(200)),
    Column("decision_note", Text),
    Column("result_hash", String(80)),  # the benchmark's content hash once written
    Index("ix_proposals_status", "status", "created_at"),
)

schedules = Table(
    "schedules",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("benchmark", Text, nullable=False),  # a directory, or a built-in name
    Column("agent_name", String(200), nullable=False),
    Column("agent_config", JSON, nullable=False),  # recorded as a run records it
    Column("agent_repo", Text),
    Column("settings", JSON, nullable=False),  # the run options (runner.execute.RunSettings)
    Column("cron", String(200), nullable=False),  # five fields, UTC
    Column("missed", String(8), nullable=False),  # skip | once: firings no worker saw in time
    Column("grace_sec", Float, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("created_by", String(200), nullable=False),
    Column("next_due_at", DateTime(timezone=True), nullable=False),
    Index("ix_schedules_next_due", "next_due_at"),
)

schedule_firings = Table(
    "schedule_firings",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column(
        "schedule_id",
        String(32),
        ForeignKey("schedules.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("due_at", DateTime(timezone=True), nullable=False),
    Column("handled_at", DateTime(timezone=True), nullable=False),
    Column("action", String(16), nullable=False),  # claimed | enqueued | skipped | refused
    Column("missed", Integer, nullable=False),  # earlier firings this one stands for
    Column("run_id", String(32)),
    Column("baseline_run_id", String(32)),  # the previous run of the schedule it was compared with
    Column("regression", Boolean),
    Column("detail", Text),  # why refused or skipped; the comparison's headline
    UniqueConstraint("schedule_id", "due_at", name="uq_schedule_firings_due"),
    Index("ix_schedule_firings_run", "run_id"),
)

webhook_deliveries = Table(
    "webhook_deliveries",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("webhook", String(200), nullable=False),
    Column("event", String(40), nullable=False),
    Column("url", Text, nullable=False),  # as it may be shown: secrets scrubbed
    Column("payload", Text, nullable=False),  # the exact body sent (and signed)
    Column("run_id", String(32)),
    Column("state", String(16), nullable=False),  # pending | delivered | failed
    Column("tries", Integer, nullable=False),
    Column("next_try_at", DateTime(timezone=True)),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("finished_at", DateTime(timezone=True)),
    Column("last_status", Integer),
    Index("ix_webhook_deliveries_due", "state", "next_try_at"),
)

webhook_tries = Table(
    "webhook_tries",
    metadata,
    Column(
        "delivery_id",
        String(32),
        ForeignKey("webhook_deliveries.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("try_number", Integer, primary_key=True),
    Column("at", DateTime(timezone=True), nullable=False),
    Column("status_code", Integer),
    Column("response", Text),  # the response body, capped and scrubbed
    Column("error", Text),  # why no response came (refused, timed out, no secret)
    Column("duration_sec", Float, nullable=False),
)
