"""The stack a generated model's run needs, measured from the C compiler's
own accounting: gcc's -fstack-usage (each function's frame) and
-fcallgraph-info=su (who calls whom, in a .ci file), for the deepest chain
of calls from the model's entry points (NAME_predict, NAME_run,
NAME_run_with_arena) through run_impl and the step functions (o2c_step_I,
one kernel call each) to the kernels' out-of-line helpers.

Functions the file does not define (the C library's expf, memcpy, ...) are
outside the measure: their frames are the library's (named in `external`).
A frame gcc calls dynamic or bounded (a variable-length array, alloca)
makes the measure fail: the generated code must have none.

    import stack
    m = stack.measure("m.ci", "m.c", "m")
    m.total, m.chain, m.steps {step: (kernel, bytes from the step down)}"""
import collections, re

Measure = collections.namedtuple("Measure", "total chain steps external base")
NODE = re.compile(r'node: \{ title: "([^"]+)" label: "([^\\"]+)\\n[^\\"]*\\n(\d+) bytes \((\w+)\)')
EXTERNAL = re.compile(r'node: \{ title: "([^"]+)" label: "([^\\"]+)"')
EDGE = re.compile(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"')
STEP = re.compile(r"^static O2C_STEP void (o2c_step_\d+)\(")
CALL = re.compile(r"^\s+(o2c_\w+)\((?:0|\(int64_t\)\S+ \* o2c_part / \d+), ")


def step_kernels(c_path):
    """{step function: the kernel it calls}"""
    out, cur = {}, None
    for line in open(c_path, encoding="utf-8", errors="replace"):
        m = STEP.match(line)
        if m:
            cur = m.group(1)
            continue
        m = CALL.match(line)
        if cur and m and cur not in out:
            out[cur] = m.group(1)
    return out


def measure(ci_path, c_path, name):
    frames, kinds, names, calls, external = {}, {}, {}, collections.defaultdict(set), set()
    for line in open(ci_path, encoding="utf-8", errors="replace"):
        m = NODE.search(line)
        if m:
            frames[m.group(1)], kinds[m.group(1)], names[m.group(1)] = int(m.group(3)), m.group(4), m.group(2)
            continue
        m = EXTERNAL.search(line)
        if m:
            names[m.group(1)] = m.group(2)
            continue
        m = EDGE.search(line)
        if m:
            calls[m.group(1)].add(m.group(2))
    bad = sorted(names[f] for f, k in kinds.items() if k != "static")
    if bad:
        raise RuntimeError("frames not of a fixed size (dynamic or bounded): " + ", ".join(bad))
    memo = {}

    def cost(f, seen=()):
        """(bytes, chain) of the deepest path from f down"""
        if f not in frames:   # not defined here: the C library's
            external.add(names.get(f, f))
            return 0, []
        if f in seen:
            raise RuntimeError("recursion through " + names[f])
        if f not in memo:
            best = (0, [])
            for g in sorted(calls[f]):
                c = cost(g, seen + (f,))
                if c[0] > best[0]:
                    best = c
            memo[f] = (frames[f] + best[0], [names[f]] + best[1])
        return memo[f]

    entries = [f for f in frames if names[f] in (name + "_predict", name + "_run", name + "_run_with_arena")]
    if not entries:
        raise RuntimeError("no entry point %s_run in %s" % (name, ci_path))
    total, chain = max(cost(f) for f in entries)
    kern = step_kernels(c_path)
    steps = {names[f]: (kern.get(names[f], "?"), cost(f)[0]) for f in frames if names[f].startswith("o2c_step_")}
    deepest_step = max((b for _, b in steps.values()), default=0)
    return Measure(total, chain, steps, sorted(external), total - deepest_step if chain and
                   any(c.startswith("o2c_step_") for c in chain) else total)
