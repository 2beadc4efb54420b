"""Helpers shared by the fixtures that start real test servers (Neo4j, Postgres) through shell scripts.

Why a script per server rather than Python: CI (.ci/run) and developers start the same servers by hand with
the same scripts, so the fixtures only check the port and call the script when nothing answers.
"""

import socket
import subprocess
from pathlib import Path


def port_answers(port: int) -> bool:
    """True when something accepts TCP connections on 127.0.0.1:port."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0):
            return True
    except OSError:
        return False


def run_server_script(script: Path, command: str, port: int, timeout_seconds: int) -> None:
    """Run ``bash SCRIPT COMMAND --port PORT``; raise with its full output if it fails."""
    completed = subprocess.run(
        ["bash", str(script), command, "--port", str(port)],
        capture_output=True,
        text=True,
        timeout=timeout_seconds,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(
            f"{script.name} {command} --port {port} failed (exit {completed.returncode}):\n"
            f"{completed.stdout}\n{completed.stderr}"
        )
