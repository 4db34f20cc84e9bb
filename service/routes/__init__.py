"""One router per resource: health, rules, scoring, readings, games, and the table WebSocket."""
