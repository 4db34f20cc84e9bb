"""The shipped ONNX models and their card, as package data (found with importlib.resources)."""
