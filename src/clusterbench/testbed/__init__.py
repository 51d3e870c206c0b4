"""Test beds: small networks built on one machine to check network benchmarks
against a known truth (a link limited to 1 Gbit/s must measure just under 1)."""
