#!/usr/bin/env python3
"""On the lent GPU machine: the SASS of one kernel family as the library
compiles it (NVRTC, kernels.COMPILE_OPTIONS), and the instruction counts of
the instantiations asked for, so that a kernel's inner loop can be read and
counted rather than guessed.

    python3 bench/device/sass_dump.py metropolis.cu "metropolis<float,1,true>" --out $OUT
"""

from __future__ import annotations

import argparse
import collections
import re
import shutil
import subprocess
import sys
from pathlib import Path

from pfresample.cuda import kernels


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("family", help="a gpu_kernels/ file, e.g. metropolis.cu")
    p.add_argument("names", nargs="+", help="template name expressions to count")
    p.add_argument("--out", type=Path, default=Path("/tmp"))
    args = p.parse_args(argv)
    tool = shutil.which("cuobjdump")
    if tool is None:
        print("sass_dump.py: cuobjdump is not on PATH", file=sys.stderr)
        return 2
    binary, names = kernels.compile_source(
        kernels.source(args.family), kernels.COMPILE_OPTIONS, kernels._TEMPLATES[args.family]
    )
    cubin = args.out / f"{Path(args.family).stem}.cubin"
    cubin.write_bytes(binary)
    sass = subprocess.run([tool, "-sass", str(cubin)], capture_output=True, text=True).stdout
    (args.out / f"{Path(args.family).stem}.sass").write_text(sass)
    # cuobjdump prints "Function : <mangled>" and then the instructions.
    functions = re.split(r"\n\s*Function : ", sass)
    for name in args.names:
        mangled = names[name]
        body = next((f for f in functions if f.startswith(mangled)), None)
        if body is None:
            print(f"{name}: not found")
            continue
        ops = re.findall(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9_]+)", body)
        counts = collections.Counter(op.split(".")[0] for op in ops)
        common = ", ".join(f"{k} {v}" for k, v in counts.most_common(20))
        print(f"{name}: {len(ops)} instructions; {common}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
