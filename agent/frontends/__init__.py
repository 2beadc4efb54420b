"""Front ends over the consult service (MCP server; more move here as the layout of issue 12 lands)."""
