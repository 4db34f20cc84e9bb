"""Stage 3: which dice lean (pose and the cocked call) and what they lean on."""
