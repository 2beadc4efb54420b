"""Front ends over the consult service: the HTTP API (ASGI) and the MCP server now; the CLI, terminal and
Slack bot move here."""
