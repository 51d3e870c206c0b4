"""The one registry every extension point uses (docs/design.md)."""
