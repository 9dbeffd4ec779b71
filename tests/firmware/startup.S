/* Reset for a Cortex-M4F under QEMU (tests/test_firmware_qemu.py): the
 * vector table (initial stack pointer, reset handler), the FPU enabled
 * (CPACR: full access to CP10 and CP11) before any float instruction, then
 * newlib's semihosting start-up (rdimon-crt0: .bss cleared, main called,
 * its status returned to the host). */
    .syntax unified
    .thumb
    .section .vectors, "a"
    .align 2
    .word __stack
    .word reset + 1
    .rept 14
    .word fault + 1
    .endr

    .text
    .thumb_func
    .global reset
reset:
    ldr r0, =0xE000ED88
    ldr r1, [r0]
    orr r1, r1, #(0xF << 20)
    str r1, [r0]
    dsb
    isb
    b _start

    .thumb_func
fault:
    b fault
