"""Shifts: when each role works in each warehouse, who is on now, and the handover at each
shift end (SPEC 13)."""
