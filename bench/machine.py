# SPDX-License-Identifier: MIT
"""What the reports say about the machine a run measured."""
import platform


def cpuinfo():
    """The CPU model, as /proc/cpuinfo names it (every report records it: figures
    from different machines are not comparable)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"
