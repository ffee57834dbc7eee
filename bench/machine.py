# SPDX-License-Identifier: MIT
"""What the reports say about the machine a run measured."""
import platform


def cpuinfo():
    """The CPU model, as /proc/cpuinfo names it, with its family and model numbers
    (every report records it: figures from different machines are not comparable, and
    a virtual machine's name may be the same for two generations: "AMD EPYC" was
    family 26 model 2 one week and family 25 model 17 the next)."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, sep, value = line.partition(":")
                if not sep:
                    if fields:
                        break  # the first CPU's block has ended
                    continue
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    name = fields.get("model name") or platform.processor() or "unknown"
    if "cpu family" in fields and "model" in fields:
        return f"{name} (family {fields['cpu family']} model {fields['model']})"
    return name


if __name__ == "__main__":
    print(cpuinfo())  # for the shell scripts' reports
