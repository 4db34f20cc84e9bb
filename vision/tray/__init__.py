"""The tray: its outline (marked, found or none) and which dice lie off it."""
