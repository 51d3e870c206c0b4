"""The host of an imported file that names none, imported without --host: stored as NO_HOST
(runs.host, the environment's host.name), shown as NO_HOST_WORDS (report/data.py), which says
where it came from; "unknown" alone read as the name of a machine."""
NO_HOST = "unknown"
NO_HOST_WORDS = "a host not given (imported; use --host)"
