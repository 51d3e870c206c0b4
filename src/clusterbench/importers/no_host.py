"""The host of an imported file that names none, imported without --host: stored as NO_HOST
(runs.host, the environment's host.name), shown as NO_HOST_WORDS (report/data.py), which says
where it came from; "unknown" alone read as the name of a machine."""
NO_HOST = "unknown"
NO_HOST_WORDS = "a host not given (imported; use --host)"


def host_shown(host: str | None, imported: bool) -> str | None:
    """A run's host as a reader is shown it: NO_HOST_WORDS for an import that named none."""
    return NO_HOST_WORDS if imported and host == NO_HOST else host


def env_shown(env: dict, imported: bool) -> dict:
    """A snapshot whose host.name is shown as host_shown gives it."""
    name = env.get("host.name")
    shown = host_shown(name, imported)
    return env if shown == name else {**env, "host.name": shown}
