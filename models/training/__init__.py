"""Training and export of the networks (torch and ultralytics live only here)."""
