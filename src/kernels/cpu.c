#include "kernels/cpu.h"

int kernel_isa_supported(KernelIsa isa)
{
    if (isa == KERNEL_ISA_PORTABLE) return 1;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    /* libgcc's CPUID reading also checks that the OS saves the AVX and AVX-512
     * registers (XGETBV), so a feature reported here can be used. */
    __builtin_cpu_init();
    int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#ifdef NMT_CLONES_NO_AVX512
    int avx512 = 0;
#else
    int avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                 __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#endif
    switch (isa) {
    case KERNEL_ISA_AVX2: return avx2;
    case KERNEL_ISA_AVX512: return avx512;
    case KERNEL_ISA_AVX512VNNI: return avx512 && __builtin_cpu_supports("avx512vnni");
    default: return 0;
    }
#else
    return 0;
#endif
}

const char *kernel_isa_name(KernelIsa isa)
{
    static const char *names[KERNEL_ISA_COUNT] = {"portable", "avx2", "avx512", "avx512vnni"};
    return isa >= 0 && isa < KERNEL_ISA_COUNT ? names[isa] : "?";
}
