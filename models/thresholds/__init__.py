"""Thresholds, fusions and gates chosen on calibration scenes after training."""
