"""Lengths of the store's text columns that hold what a user gives (a label,
a suite's, step's or kernel's name, a host name an imported file states):
schema.py declares its columns with them, and storable.py checks input
against them before a run or an import, without importing SQLAlchemy."""
RUN_LABEL = 200
RUN_SUITE = 200
STEP_NAME = 200
STEP_KERNEL = 100
HOST = 255
