/* calscope engine: what vector instructions the CPU (and the OS) let calscope use — the one
 * place that asks. The code is built for baseline x86-64; functions built for more (a
 * target attribute) run only where this says so. */
#ifndef CALSCOPE_CPU_H
#define CALSCOPE_CPU_H

enum {
    CS_CPU_AVX = 1,     /* AVX, and the OS saves the YMM registers */
    CS_CPU_AVX2 = 2,    /* AVX2 (with AVX) */
    CS_CPU_F16C = 4     /* F16C (with AVX) */
};

/* The CS_CPU_* the CPU has: CPUID leaves 1 and 7 and XGETBV, asked once (in a virtual machine
 * each CPUID traps to the hypervisor); 0 off x86-64. Any thread. clang's
 * __builtin_cpu_supports knows no "f16c", hence not that. */
unsigned cs_cpu_features(void);

#endif
