"""Alembic environment: the store hands over its open connection."""
from alembic import context

from clusterbench.store.schema import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
