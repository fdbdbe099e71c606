"""Units of time. The lab keeps every time in epoch seconds; scores speak in hours.

hours = (now - last_accessed) / SECONDS_PER_HOUR     # seconds -> hours
"""

SECONDS_PER_HOUR = 3600.0
HOURS_PER_DAY = 24.0
SECONDS_PER_DAY = SECONDS_PER_HOUR * HOURS_PER_DAY
