"""Stage 1: the one-class die detector (ONNX) and its head's decoding."""
