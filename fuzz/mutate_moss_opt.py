#!/usr/bin/env python3
"""Mutation fuzzing of moss-opt over the lit tests' IR.

Each round takes one `// -----` chunk of a test under test/, changes one to
three things (an integer, an element type, a static size to `?`, a line, two
SSA names, a boolean or layout attribute), and runs one of the moss pass
pipelines on it. moss-opt may reject the input with a diagnostic (exit 0 or
1); anything else is kept under OUT as crash-<hash>.mlir with the pipeline
and the output beside it: a signal, an exit status above 1, a timeout, a
sanitizer report, `LLVM ERROR` or a crash backtrace. Use a moss-opt built
with -fsanitize=address,undefined.

  fuzz/mutate_moss_opt.py --moss-opt build-asan/bin/moss-opt --seconds 600 \
      --out /tmp/moss-opt-crashes [--seed N]

Crashes inside MLIR's own parser are upstream bugs (e.g. `array<index: 2>`,
llvm/llvm-project#179045, fixed after LLVM 22.1); the summary counts them
apart and does not keep them.
"""
import argparse
import hashlib
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INTS = [0, 1, -1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 96, 127,
        128, 255, 256, 1023, 1024, 4096, 65535, 65536, 2**31 - 1, 2**31,
        2**32, 2**62, 2**63 - 1]
TYPES = ['bf16', 'f32', 'f16', 'i1', 'i8', 'i32', 'i64', 'f64', 'index']
CRASH = re.compile(r'AddressSanitizer|runtime error|LLVM ERROR|Assertion|'
                   r'PLEASE submit|LeakSanitizer|Stack dump')
UPSTREAM_PARSER = re.compile(r'in mlir::detail::Parser::|AsmParser/')


def pipelines(whitelist):
    select = 'moss-select-tiles{whitelist=%s}' % whitelist
    return [
        [],
        ['-moss-convert-to-gpu'],
        ['-moss-convert-to-gpu', '-canonicalize'],
        ['-moss-select-tiles=whitelist=' + whitelist],
        ['--pass-pipeline=builtin.module(%s,moss-convert-to-gpu)' % select],
        ['--pass-pipeline=builtin.module(%s,moss-to-cubin{format=isa})' % select],
        ['--pass-pipeline=builtin.module(moss-to-cubin{format=isa})'],
    ]


def chunks():
    found = []
    for path in sorted((ROOT / 'test').rglob('*.mlir')):
        if 'Inputs' in path.parts:
            continue
        for chunk in path.read_text().split('// -----'):
            if 'moss.' in chunk or 'gpu.' in chunk:
                found.append(chunk)
    return found


def replace(text, match, new):
    return text[:match.start()] + new + text[match.end():]


def mutate(rng, text):
    for _ in range(rng.randint(1, 3)):
        r = rng.random()
        if r < 0.45:
            found = list(re.finditer(r'(?<![\w.%#@])-?\d+(?![\w.])', text))
            if found:
                text = replace(text, rng.choice(found), str(rng.choice(INTS)))
        elif r < 0.6:
            found = list(re.finditer(r'\b(bf16|f32|f16|i1|i8|i32|i64)\b', text))
            if found:
                text = replace(text, rng.choice(found), rng.choice(TYPES))
        elif r < 0.7:
            found = list(re.finditer(r'(?<=[<x])\d+(?=x)', text))
            if found:
                text = replace(text, rng.choice(found), '?')
        elif r < 0.8:
            lines = text.split('\n')
            if len(lines) > 2:
                del lines[rng.randrange(len(lines))]
            text = '\n'.join(lines)
        elif r < 0.9:
            found = list(re.finditer(r'%\w+', text))
            if len(found) > 2:
                a, b = sorted(rng.sample(found, 2), key=lambda m: m.start())
                text = (text[:a.start()] + b.group() + text[a.end():b.start()] +
                        a.group() + text[b.end():])
        else:
            found = list(re.finditer(r'\b(true|false|"bthd"|"bhtd"|unit)\b', text))
            if found:
                text = replace(text, rng.choice(found),
                               rng.choice(['true', 'false', '"x"', '0', '[]']))
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--moss-opt', required=True)
    parser.add_argument('--seconds', type=float, default=600)
    parser.add_argument('--out', required=True)
    parser.add_argument('--seed', type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    whitelist = str(ROOT / 'test/Dialect/Moss/Inputs/whitelist.json')
    pipes, corpus = pipelines(whitelist), chunks()
    if not corpus:
        sys.exit('mutate_moss_opt: no IR found under test/')
    deadline = time.time() + args.seconds
    runs = upstream = 0
    kept = set()
    while time.time() < deadline:
        text = mutate(rng, rng.choice(corpus))
        pipe = rng.choice(pipes)
        runs += 1
        try:
            done = subprocess.run([args.moss_opt, '-', *pipe], input=text.encode(),
                                  capture_output=True, timeout=60)
            status, err = done.returncode, done.stderr.decode(errors='replace')
        except subprocess.TimeoutExpired:
            status, err = 'timeout', ''
        if status in (0, 1) and not CRASH.search(err):
            continue
        if UPSTREAM_PARSER.search(err):
            upstream += 1
            continue
        first = next((l for l in err.split('\n') if CRASH.search(l)), str(status))
        signature = re.sub(r'0x[0-9a-f]+|==\d+==', '', first)[:200]
        if signature in kept:
            continue
        kept.add(signature)
        name = 'crash-' + hashlib.sha1(text.encode()).hexdigest()[:10]
        (out / (name + '.mlir')).write_text(text)
        (out / (name + '.txt')).write_text(
            ' '.join(pipe) + '\nstatus ' + str(status) + '\n' + err[-8000:])
        print(f'{name}: status {status}: {first[:160]}', flush=True)
    print(f'mutate_moss_opt: {runs} runs, {len(kept)} distinct crashes kept, '
          f'{upstream} in MLIR\'s parser (upstream)')
    sys.exit(1 if kept else 0)


if __name__ == '__main__':
    main()
