"""From a stream of readings to one reading per throw."""
