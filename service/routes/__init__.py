"""One router per resource: health, rules, scoring, readings, games, tournaments, the table WebSocket and changes."""
