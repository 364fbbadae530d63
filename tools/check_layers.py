#!/usr/bin/env python3
"""Checks that includes in src/ point one way: a file in layer L includes only headers of L or
of layers below it. Prints every violation and exits 1 if there is one.

usage: check_layers.py SRC_DIR
"""
import pathlib
import re
import sys

# Bottom to top (docs/design.md, "Layers").
LAYERS = ["core", "simd", "kernels", "runtime", "tensor", "ops"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)/[^"]+"')


def main() -> int:
    src = pathlib.Path(sys.argv[1])
    rank = {name: i for i, name in enumerate(LAYERS)}
    bad, files = [], 0
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".h", ".cc", ".inc"):
            continue
        layer = path.relative_to(src).parts[0]
        if layer not in rank:
            bad.append(f"{path}: folder {layer} is not a known layer ({', '.join(LAYERS)})")
            continue
        files += 1
        for no, line in enumerate(path.read_text().splitlines(), 1):
            m = INCLUDE.match(line)
            if m and m.group(1) in rank and rank[m.group(1)] > rank[layer]:
                bad.append(f"{path}:{no}: {layer} (layer {rank[layer]}) includes "
                           f"{m.group(1)} (layer {rank[m.group(1)]}): {line.strip()}")
    for b in bad:
        print(b)
    print(f"check_layers: {files} files in {len(LAYERS)} layers "
          f"({' < '.join(LAYERS)}), {len(bad)} upward includes")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
