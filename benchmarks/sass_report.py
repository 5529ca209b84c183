#!/usr/bin/env python3
"""SASS instruction mix of generated kernels, for the reports of missed targets.

Usage: sass_report.py [--function NAME ...] [--top N] INPUT [INPUT ...]

An INPUT is a cubin (disassembled with `cuobjdump -sass`, which must be on
PATH or in $CUDA_HOME/bin) or a text file holding that disassembly. Prints,
per function, a Markdown table row: the static instruction count and how many
of them fall in each class (tensor-core MMAs, shared-memory and global
accesses, asynchronous copies and barriers, MUFU, FP32 arithmetic, integer
and address arithmetic, control flow), then with --top the N most frequent
opcodes. Static counts: what the instruction cache and the issue slots of one
pass through the code see, not a profile.
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys

# Opcode (the part before the first '.') -> class. Order of the columns.
CLASSES = [
    ("mma", {"HMMA", "HGMMA", "WARPGROUP"}),
    ("ldsm/lds/sts", {"LDSM", "LDS", "STS", "LD", "ST"}),
    ("global", {"LDG", "STG", "LDGSTS", "LDGDEPBAR", "RED", "ATOMG", "CCTL"}),
    ("async/tma", {"UTMALDG", "UTMAPF", "UBLKCP", "SYNCS", "STAS", "UTMACCTL", "FENCE"}),
    ("barrier", {"BAR", "DEPBAR", "MEMBAR", "ERRBAR", "UCGABAR_ARV", "UCGABAR_WAIT"}),
    ("mufu", {"MUFU"}),
    ("fp32", {"FFMA", "FADD", "FMUL", "FMNMX", "FSEL", "FSETP", "FCHK", "F2F", "F2FP", "I2F", "F2I", "FRND"}),
    ("int/addr", {"IMAD", "IADD3", "LEA", "LOP3", "SHF", "ISETP", "SEL", "PRMT", "IMNMX", "POPC", "FLO",
                  "BREV", "IABS", "VIADD", "VIMNMX", "PLOP3", "P2R", "R2P", "MOV", "S2R", "CS2R",
                  "S2UR", "LDC", "ULDC", "UMOV", "UIADD3", "ULOP3", "USHF", "UIMAD", "ULEA", "UISETP", "USEL",
                  "R2UR", "UPRMT", "VOTE", "VOTEU", "SHFL", "MATCH", "UFLO", "UPOPC"}),
    ("control", {"BRA", "EXIT", "BSSY", "BSYNC", "CALL", "RET", "NOP", "YIELD", "BPT", "WARPSYNC", "NANOSLEEP",
                 "ELECT", "ACQBULK", "JMP", "BREAK"}),
]
COLUMNS = [name for name, _ in CLASSES] + ["other"]

FUNCTION_RE = re.compile(r"^\s*Function\s*:\s*(\S+)")
# "/*0040*/   @!P0 BRA `(.L_x_3) ;" -- offset, optional predicate, opcode.
INSTRUCTION_RE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_.]+)?)")


def classify(opcode):
    base = opcode.split(".")[0]
    for name, members in CLASSES:
        if base in members:
            return name
    return "other"


def parse(text):
    """Returns {function: Counter of full opcodes}, in the order found."""
    functions = collections.OrderedDict()
    current = None
    for line in text.splitlines():
        match = FUNCTION_RE.match(line)
        if match:
            current = functions.setdefault(match.group(1), collections.Counter())
            continue
        match = INSTRUCTION_RE.match(line)
        if match and current is not None:
            current[match.group(2)] += 1
    return functions


def disassemble(path):
    with open(path, "rb") as f:
        head = f.read(4)
    if head != b"\x7fELF":
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    tool = shutil.which("cuobjdump") or os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin",
                                                     "cuobjdump")
    if not os.access(tool, os.X_OK):
        sys.exit(f"sass_report: {path} is a cubin and cuobjdump is not on PATH nor in $CUDA_HOME/bin")
    result = subprocess.run([tool, "-sass", path], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"sass_report: cuobjdump -sass {path} failed: {result.stderr.strip()}")
    return result.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("inputs", nargs="+", metavar="INPUT")
    parser.add_argument("--function", action="append", default=[],
                        help="report only these functions (default: every one found)")
    parser.add_argument("--top", type=int, default=0, help="also list the N most frequent opcodes")
    args = parser.parse_args()

    rows = []
    for path in args.inputs:
        if not os.path.exists(path):
            sys.exit(f"sass_report: {path}: no such file")
        functions = parse(disassemble(path))
        if not functions:
            sys.exit(f"sass_report: {path}: no 'Function :' section with instructions (not cuobjdump -sass output?)")
        for name, counts in functions.items():
            if args.function and name not in args.function:
                continue
            rows.append((name, counts))
    missing = set(args.function) - {name for name, _ in rows}
    if missing:
        sys.exit("sass_report: function(s) not found: " + ", ".join(sorted(missing)))

    print("| function | instructions | " + " | ".join(COLUMNS) + " |")
    print("|---|---:|" + "---:|" * len(COLUMNS))
    for name, counts in rows:
        by_class = collections.Counter()
        for opcode, n in counts.items():
            by_class[classify(opcode)] += n
        total = sum(counts.values())
        print(f"| {name} | {total} | " + " | ".join(str(by_class[c]) for c in COLUMNS) + " |")
    if args.top:
        for name, counts in rows:
            top = ", ".join(f"{op} {n}" for op, n in counts.most_common(args.top))
            print(f"\n{name}: {top}")


if __name__ == "__main__":
    main()
