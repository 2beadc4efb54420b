"""Front ends over the consult service: the HTTP API (ASGI) now; the CLI, terminal and Slack bot move here."""
