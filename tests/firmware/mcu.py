"""A generated model on an emulated Cortex-M, for tests and benchmarks:
builds `onnx2c --target cortex-m` output with Debian's gcc-arm-none-eabi
for QEMU's MPS2 boards (mps2-an386: Cortex-M4F, DSP extension and FPU;
mps2-an385: Cortex-M3, neither), runs it under qemu-system-arm with
semihosting, and the same sources on the host, with one harness
(HARNESS_C) that feeds the test input and prints every output's bytes in
hex: the integer kernels' DSP path (SMLAD, SXTB16), their portable C (the
Cortex-M3, the host) and the host must print the same bytes.

Instructions: run with `-icount shift=0` QEMU advances its virtual clock
1 ns per executed instruction; the board's CMSDK APB timer 0 (0x40000000)
counts down at the 25 MHz system clock, so one tick is 40 instructions
(CALIBRATION_LOOP checks the ratio in the same run). The harness reads the
timer around the model's run: `instructions N` is the inference's
instruction count to within 80.

    import mcu; mcu.available() -> (ok, why)"""
import collections, os, shutil, subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
CPUS = {
    # name: (gcc flags, QEMU board)
    "m4": (["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"], "mps2-an386"),
    "m3": (["-mcpu=cortex-m3", "-mthumb", "-mfloat-abi=soft"], "mps2-an385"),
}
MODEL_FLAGS = ["-Os", "-ffreestanding", "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror"]
INSNS_PER_TICK = 40   # 1 ns an instruction (-icount shift=0), a 25 MHz timer
# a run: ok, why (when not), outs {"outK": hex bytes}, insns (the model's run
# on the board; None on the host), rows (a --profile build: (kernel, node,
# flops, instructions) per call)
Run = collections.namedtuple("Run", "ok why outs insns rows")

HARNESS_C = r'''#include <stdio.h>
#include <stdint.h>
#include "m.h"
%(data)s
#if defined(__arm__)
#define O2C_TIMER ((volatile uint32_t *)0x40000000u)   /* CMSDK APB timer 0: CTRL, VALUE, RELOAD */
static void timer_start(void) { O2C_TIMER[2] = 0xFFFFFFFFu; O2C_TIMER[1] = 0xFFFFFFFFu; O2C_TIMER[0] = 1u; }
static uint32_t timer_now(void) { return O2C_TIMER[1]; }
/* n iterations of two instructions: the timer's ticks per instruction */
static uint32_t calibrate(uint32_t n)
{
    uint32_t a = timer_now(), b;
    __asm__ volatile("1: subs %%0, %%0, #1\n bne 1b" : "+r"(n) : : "cc");
    b = timer_now();
    return a - b;
}
#else
static void timer_start(void) {}
static uint32_t timer_now(void) { return 0; }
static uint32_t calibrate(uint32_t n) { return n / 20u; }
#endif
int main(void)
{
    const void *in[%(ni)d] = {%(in_ptrs)s};
    void *out[%(no)d] = {%(out_ptrs)s};
    static const unsigned out_n[%(no)d] = {%(out_sizes)s};
    uint32_t t0, t1, cal;
    int rc;
    timer_start();
    cal = calibrate(100000u);
    t0 = timer_now();
    rc = m_run(in, out);
    t1 = timer_now();
    printf("rc %%d\n", rc);
    for (int k = 0; k < %(no)d; k++) {
        const unsigned char *b = (const unsigned char *)out[k];
        printf("out%%d ", k);
        for (unsigned i = 0; i < out_n[k]; i++) printf("%%02x", b[i]);
        printf("\n");
    }
    printf("ticks %%lu calibration %%lu\n", (unsigned long)(t0 - t1), (unsigned long)cal);
#ifdef MCU_PROFILE
    {   /* onnx2c --profile: each call's timer ticks */
        const m_profile_row *r = m_profile_rows();
        for (int i = 0; r[i].kernel; i++)
            printf("row %%d %%s %%s %%ld %%lu\n", i, r[i].kernel, r[i].node, (long)r[i].flops, (unsigned long)r[i].time);
    }
#endif
    return rc;
}
'''


def available():
    missing = [t for t in ("arm-none-eabi-gcc", "arm-none-eabi-size", "qemu-system-arm") if not shutil.which(t)]
    if missing:
        return False, "%s not installed (tools/install-deps.sh installs them)" % ", ".join(missing)
    return True, ""


def c_bytes(name, data, const=True):
    """a C array of the bytes, aligned for any element type"""
    body = ",".join(str(b) for b in data) if data else "0"
    return "static %sunsigned char %s[%d] __attribute__((aligned(8))) = {%s};\n" % (
        "const " if const else "", name, max(len(data), 1), body)


def write_harness(path, inputs, out_sizes):
    """inputs: bytes of each graph input; out_sizes: bytes of each output"""
    data = "".join(c_bytes("in%d" % k, b) for k, b in enumerate(inputs))
    data += "".join("static unsigned char out%d[%d] __attribute__((aligned(8)));\n" % (k, max(n, 1))
                    for k, n in enumerate(out_sizes))
    with open(path, "w") as f:
        f.write(HARNESS_C % dict(data=data, ni=len(inputs), no=len(out_sizes),
                                 in_ptrs=", ".join("in%d" % k for k in range(len(inputs))),
                                 out_ptrs=", ".join("out%d" % k for k in range(len(out_sizes))),
                                 out_sizes=", ".join(str(n) for n in out_sizes)))


def _run(cmd, cwd, timeout=600):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout, r.stderr


# a --profile build's timer on the board: the instructions (the timer's
# ticks, counting down, times INSNS_PER_TICK)
PROFILE_FLAGS = ["-DO2C_PROFILE_NOW()=(0u - *(volatile uint32_t *)0x40000004u)", "-DO2C_PROFILE_T=uint32_t",
                 "-DO2C_PROFILE_UNITS_PER_SEC=25e6", "-DO2C_PROFILE_NO_STDIO", "-DMCU_PROFILE"]


def build(work, cpu, model_c="m.c", extra=(), elf="fw.elf"):
    """the model (as firmware builds it: -Os -ffreestanding, warning-free)
    and the harness linked for the board; (ok, message, sizes) with sizes
    {'text', 'rodata', 'bss', 'data'} of the model's object"""
    flags, _ = CPUS[cpu]
    obj = elf + ".model.o"
    rc, out, err = _run(["arm-none-eabi-gcc"] + flags + MODEL_FLAGS + list(extra) + ["-c", model_c, "-o", obj], work)
    if rc:
        return False, "arm-none-eabi-gcc (model): " + err.strip()[:400], None
    rc, out, err = _run(["arm-none-eabi-gcc"] + flags + list(extra) + ["-Os", "-std=c99", "-I.", "--specs=rdimon.specs",
                        "-T", os.path.join(HERE, "link.ld"), os.path.join(HERE, "startup.S"), "main.c", obj,
                        "-lm", "-o", elf], work)
    if rc:
        return False, "arm-none-eabi-gcc (link): " + err.strip()[:400], None
    rc, out, err = _run(["arm-none-eabi-size", "-A", obj], work)
    sizes = {"text": 0, "rodata": 0, "bss": 0, "data": 0}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[1].isdigit():
            sec = parts[0]
            for key in sizes:
                if sec == "." + key or sec.startswith("." + key + "."):
                    sizes[key] += int(parts[1])
    return True, "", sizes


def run_qemu(work, cpu, elf="fw.elf", timeout=600):
    """a Run"""
    _, board = CPUS[cpu]
    rc, out, err = _run(["qemu-system-arm", "-M", board, "-nographic", "-icount", "shift=0", "-semihosting-config",
                         "enable=on,target=native", "-kernel", elf], work, timeout)
    return parse(rc, out, err, "qemu " + board)


def build_host(work, exe="host"):
    rc, out, err = _run(["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-I.", "main.c", "m.c", "-lm",
                         "-o", exe], work)
    if rc:
        return False, "gcc (host): " + err.strip()[:400]
    return True, ""


def run_host(work, exe="host", prefix=()):
    """a Run of the host build (or, prefix an emulator, another machine's)"""
    rc, out, err = _run(list(prefix) + [os.path.join(work, exe)], work)
    return parse(rc, out, err, " ".join(list(prefix) + ["host"]), board=False)


def parse(rc, out, err, what, board=True):
    outs, ticks, cal, rows = {}, None, None, []
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[0].startswith("out") and len(parts) == 2:
            outs[parts[0]] = parts[1]
        elif parts and parts[0] == "row" and len(parts) == 6:
            rows.append((parts[2], parts[3], int(parts[4]), int(parts[5]) * INSNS_PER_TICK))
        elif parts and parts[0] == "ticks":
            ticks, cal = int(parts[1]), int(parts[3])
    if rc != 0 or "rc 0" not in out:
        return Run(False, "%s: exit %d %s %s" % (what, rc, out.strip()[-200:], err.strip()[-200:]), outs, None, rows)
    if ticks is None:
        return Run(False, "%s: no timing line" % what, outs, None, rows)
    # the calibration loop: 100000 iterations of 2 instructions
    insns = None
    if cal and board:
        if abs(cal * INSNS_PER_TICK - 200000) > 2 * INSNS_PER_TICK:
            return Run(False, "%s: the timer counted %d ticks for 200000 instructions (expected %d)" % (
                what, cal, 200000 // INSNS_PER_TICK), outs, None, rows)
        insns = ticks * INSNS_PER_TICK
    return Run(True, "", outs, insns, rows)
