"""Files a user names (reports, exports, summaries) and state files: written
whole or not at all, never through a name that is not what it seems."""
