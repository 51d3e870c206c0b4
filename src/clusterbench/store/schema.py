"""The results store's tables (SQLAlchemy Core). Changes go through a new
Alembic migration in migrations/versions, never by editing an old one."""
from __future__ import annotations

from sqlalchemy import (JSON, Column, DateTime, Float, ForeignKey, Integer, MetaData, String, Table, Text,
                        BigInteger)

from clusterbench.store import text_limits

metadata = MetaData()

# One row per distinct machine description, referenced by hash.
environments = Table(
    "environments", metadata,
    Column("hash", String(64), primary_key=True),
    Column("captured", DateTime(timezone=True), nullable=False),
    Column("data", JSON, nullable=False),
)

runs = Table(
    "runs", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("label", String(text_limits.RUN_LABEL)),
    Column("user", String(100)),
    Column("host", String(text_limits.HOST)),
    Column("pid", Integer),
    Column("command", Text),
    Column("suite", String(text_limits.RUN_SUITE)),
    Column("started", DateTime(timezone=True), nullable=False),
    Column("finished", DateTime(timezone=True)),
    # running | ok | failed | interrupted | killed
    Column("status", String(20), nullable=False),
    Column("message", Text),
    Column("batch_job", String(100)),  # "slurm 1234", "sge 5678.3"... (environment/batchjob.py); NULL outside one
    Column("imported_from", Text),     # "fio 3.33 JSON, file a.json" for an imported run (0004); NULL if measured
    # measured | cluster | imported (0007): what made the run, never read from its suite's name
    Column("kind", String(20), nullable=False, server_default="measured"),
    # an imported run's file: SHA-256 (hex) of its bytes, and when it was imported (0009), so a file the
    # store holds is refused (docs/import.md); NULL if measured or imported before. Last, as the migration
    # appends them: both row layers must read a row's columns in one order
    Column("imported_sha256", String(64), index=True),
    Column("imported_at", DateTime(timezone=True)),
)

run_hosts = Table(
    "run_hosts", metadata,
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("host", String(text_limits.HOST), primary_key=True),
    # indexed (0010): prune asks which runs use each environment
    Column("environment_hash", String(64), ForeignKey("environments.hash"), nullable=False, index=True),
)

steps = Table(
    "steps", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("position", Integer, nullable=False),
    Column("name", String(text_limits.STEP_NAME)),
    Column("kernel", String(text_limits.STEP_KERNEL), nullable=False),
    Column("params", JSON, nullable=False),       # canonical text values (plan_params, 0005)
    Column("launcher", String(50), nullable=False),
    Column("ranks", Integer, nullable=False),
    Column("ranks_per_node", Integer),
    Column("status", String(20), nullable=False),
    Column("started", DateTime(timezone=True), nullable=False),
    Column("finished", DateTime(timezone=True)),
    Column("build", JSON),                        # cbk's final "run" record
    Column("message", Text),
    Column("stop_reason", String(200)),          # why repetition stopped (0002)
    Column("host", String(text_limits.HOST)),   # the one node a per-node cluster step ran on (0006); else NULL
    # the names that tell a sweep's step from its siblings (plan.Step.swept, 0012): ["op"], ["block-size", "np"];
    # [] outside a sweep; NULL for a step stored before it (or imported). Last, as the migration appends it
    Column("swept", JSON),
)

samples = Table(
    "samples", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("step_id", Integer, ForeignKey("steps.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("repetition", Integer, nullable=False),
    Column("phase", String(100), nullable=False),
    Column("mode", String(100)),
    Column("value", Float),
    Column("unit", String(50)),
    Column("seconds", Float),
    Column("bytes", BigInteger),
    Column("ops", BigInteger),
    Column("warnings", JSON, nullable=False),
    Column("record", JSON, nullable=False),       # the raw cbk record
)
