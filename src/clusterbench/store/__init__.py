"""The results store: SQLite by default, any SQLAlchemy URL (PostgreSQL) by --db."""
from clusterbench.store.database import Store, default_url

__all__ = ["Store", "default_url"]
