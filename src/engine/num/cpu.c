/* What vector instructions calscope may use (cpu.h). */
#include "engine/num/cpu.h"

#include <stdatomic.h>

#if defined(__GNUC__) && defined(__x86_64__)
#include <cpuid.h>

static unsigned ask(void)
{
    unsigned a, b, c, d, lo = 0, hi = 0, f = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_AVX) || !(c & bit_OSXSAVE)) return 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0u));
    (void)hi;
    if ((lo & 6u) != 6u) return 0;   /* the OS does not save the XMM and YMM state */
    f = CS_CPU_AVX;
    if (c & bit_F16C) f |= CS_CPU_F16C;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX2)) f |= CS_CPU_AVX2;
    return f;
}
#else
static unsigned ask(void)
{
    return 0;
}
#endif

unsigned cs_cpu_features(void)
{
    static atomic_int known = -1;
    int k = atomic_load_explicit(&known, memory_order_relaxed);
    if (k < 0) {
        k = (int)ask();
        atomic_store_explicit(&known, k, memory_order_relaxed);
    }
    return (unsigned)k;
}
