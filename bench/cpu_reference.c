/* Reference CPU kernels for bench/bench_cpu.py: a plain OpenMP STREAM triad and a hand-written
 * intrinsics FMA loop, against which apple_roofline's CPU `stream` triad and FP32 `peak` variants
 * are compared in the same run.
 *
 * Build (Linux, GCC or Clang):  cc -std=c11 -O3 -march=native -fopenmp cpu_reference.c -o cpu_reference
 * (arm64: -mcpu=native; macOS: Apple clang has no -fopenmp, see bench/README.md.)
 *
 *   cpu_reference triad N_ELEMS REPS
 *       float a, b, c[N_ELEMS], aligned_alloc(64), first-touched in parallel with the same static
 *       schedule as the kernel; a[i] = b[i] + q*c[i] with q = 3; 3 warm-up runs, REPS timed runs
 *       (omp_get_wtime); every element verified; 12 bytes per element (BabelStream counting).
 *   cpu_reference fma SECONDS_PER_SAMPLE REPS
 *       every OpenMP thread runs NACC independent vector chains acc = fma(acc, acc, a) with
 *       a = -0.5 (the tool's chains have the same form with a = -0.75; the constant does not
 *       change the FMA rate. Here it gives an attracting fixed point (1 - sqrt 3)/2, so the
 *       checksum is predictable; values stay in [-1.36, 1.36], never denormal); NACC = 16 zmm (AVX-512), 12 ymm (AVX2+FMA), 16 q (NEON).
 *       2 FLOP per lane per FMA.
 * Each mode prints one JSON line on stdout; exit status 1 on a verification failure, 2 on bad use.
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__AVX512F__)
#include <immintrin.h>
#define VEC_BITS 512
#define NACC 16
#define ISA "avx512"
typedef __m512 vec_t;
#define VSPLAT(x) _mm512_set1_ps(x)
#define VFMA(c, a) _mm512_fmadd_ps((c), (c), (a)) /* c*c + a */
#define VADD(x, y) _mm512_add_ps((x), (y))
#define VSUM(x) _mm512_reduce_add_ps(x)
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define VEC_BITS 256
#define NACC 12
#define ISA "avx2+fma"
typedef __m256 vec_t;
#define VSPLAT(x) _mm256_set1_ps(x)
#define VFMA(c, a) _mm256_fmadd_ps((c), (c), (a))
#define VADD(x, y) _mm256_add_ps((x), (y))
static float VSUM(__m256 x) {
  float t[8];
  _mm256_storeu_ps(t, x);
  return t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7];
}
#elif defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#define VEC_BITS 128
#define NACC 16
#define ISA "neon"
typedef float32x4_t vec_t;
#define VSPLAT(x) vdupq_n_f32(x)
#define VFMA(c, a) vfmaq_f32((a), (c), (c)) /* a + c*c */
#define VADD(x, y) vaddq_f32((x), (y))
#define VSUM(x) vaddvq_f32(x)
#else
#error "cpu_reference.c needs AVX-512, AVX2+FMA or NEON: compile with -march=native (x86-64) or -mcpu=native (arm64)"
#endif

#define LANES (VEC_BITS / 32)

static int cmp_double(const void* x, const void* y) {
  double a = *(const double*)x, b = *(const double*)y;
  return (a > b) - (a < b);
}

static double median(const double* v, int n) {
  double* s = malloc(sizeof(double) * (size_t)n);
  memcpy(s, v, sizeof(double) * (size_t)n);
  qsort(s, (size_t)n, sizeof(double), cmp_double);
  double m = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  free(s);
  return m;
}

static double minimum(const double* v, int n) {
  double m = v[0];
  for (int i = 1; i < n; ++i)
    if (v[i] < m) m = v[i];
  return m;
}

static void print_samples(const double* s, int n) {
  printf("\"samples_s\":[");
  for (int i = 0; i < n; ++i) printf("%s%.9g", i ? "," : "", s[i]);
  printf("]");
}

/* ---- triad ----------------------------------------------------------------------------------- */

static void triad(float* restrict a, const float* restrict b, const float* restrict c, float q, long n) {
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) a[i] = b[i] + q * c[i];
}

static float* alloc_floats(long n) {
  size_t bytes = ((size_t)n * sizeof(float) + 63) / 64 * 64; /* aligned_alloc: size a multiple of 64 */
  float* p = aligned_alloc(64, bytes);
  if (!p) {
    fprintf(stderr, "cpu_reference: aligned_alloc of %zu bytes failed\n", bytes);
    exit(2);
  }
  return p;
}

static int run_triad(long n, int reps) {
  float* a = alloc_floats(n);
  float* b = alloc_floats(n);
  float* c = alloc_floats(n);
  const float q = 3.0f;
  /* First touch with the kernel's own static schedule, so each thread's pages are local to it.
   * Small integers keep b + q*c exact whether or not the compiler contracts it into an FMA. */
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) {
    a[i] = 0.0f;
    b[i] = (float)(i & 1023);
    c[i] = (float)(i % 7);
  }
  for (int w = 0; w < 3; ++w) triad(a, b, c, q, n);
  double* s = malloc(sizeof(double) * (size_t)reps);
  for (int r = 0; r < reps; ++r) {
    double t0 = omp_get_wtime();
    triad(a, b, c, q, n);
    s[r] = omp_get_wtime() - t0;
  }
  long bad = 0, first_bad = -1;
#pragma omp parallel for schedule(static) reduction(+ : bad)
  for (long i = 0; i < n; ++i)
    if (a[i] != b[i] + q * c[i]) ++bad;
  if (bad) {
    for (long i = 0; i < n; ++i)
      if (a[i] != b[i] + q * c[i]) { first_bad = i; break; }
    fprintf(stderr, "cpu_reference: triad verification failed: %ld of %ld elements wrong (first at %ld: %g != %g)\n",
            bad, n, first_bad, (double)a[first_bad], (double)(b[first_bad] + q * c[first_bad]));
    return 1;
  }
  const double bytes = 12.0 * (double)n;
  printf("{\"kernel\":\"triad\",\"n\":%ld,\"threads\":%d,\"bytes_per_elem\":12,", n, omp_get_max_threads());
  print_samples(s, reps);
  printf(",\"gbps_median\":%.6g,\"gbps_best\":%.6g}\n", bytes / median(s, reps) / 1e9, bytes / minimum(s, reps) / 1e9);
  free(s);
  free(a);
  free(b);
  free(c);
  return 0;
}

/* ---- fma ------------------------------------------------------------------------------------- */

/* The hot loop: NACC independent chains, NACC FMAs per iteration, nothing else but the counter.
 * noinline keeps it one symbol (fma_block) for the objdump check in bench_cpu.py. */
__attribute__((noinline)) static float fma_block(long iters, float seed) {
  const vec_t av = VSPLAT(-0.5f);
  vec_t c0 = VSPLAT(seed + 0.00f), c1 = VSPLAT(seed + 0.01f), c2 = VSPLAT(seed + 0.02f), c3 = VSPLAT(seed + 0.03f);
  vec_t c4 = VSPLAT(seed + 0.04f), c5 = VSPLAT(seed + 0.05f), c6 = VSPLAT(seed + 0.06f), c7 = VSPLAT(seed + 0.07f);
  vec_t c8 = VSPLAT(seed + 0.08f), c9 = VSPLAT(seed + 0.09f), c10 = VSPLAT(seed + 0.10f), c11 = VSPLAT(seed + 0.11f);
#if NACC == 16
  vec_t c12 = VSPLAT(seed + 0.12f), c13 = VSPLAT(seed + 0.13f), c14 = VSPLAT(seed + 0.14f), c15 = VSPLAT(seed + 0.15f);
#endif
  for (long i = 0; i < iters; ++i) {
    c0 = VFMA(c0, av); c1 = VFMA(c1, av); c2 = VFMA(c2, av); c3 = VFMA(c3, av);
    c4 = VFMA(c4, av); c5 = VFMA(c5, av); c6 = VFMA(c6, av); c7 = VFMA(c7, av);
    c8 = VFMA(c8, av); c9 = VFMA(c9, av); c10 = VFMA(c10, av); c11 = VFMA(c11, av);
#if NACC == 16
    c12 = VFMA(c12, av); c13 = VFMA(c13, av); c14 = VFMA(c14, av); c15 = VFMA(c15, av);
#endif
  }
  vec_t s = VADD(VADD(VADD(c0, c1), VADD(c2, c3)), VADD(VADD(c4, c5), VADD(c6, c7)));
  s = VADD(s, VADD(VADD(c8, c9), VADD(c10, c11)));
#if NACC == 16
  s = VADD(s, VADD(VADD(c12, c13), VADD(c14, c15)));
#endif
  return VSUM(s);
}

/* One sample: every thread runs fma_block(iters) between two barriers; the master times it. */
static double fma_sample(long iters, double* checksum) {
  double t0 = 0.0, t1 = 0.0, sum = 0.0;
#pragma omp parallel reduction(+ : sum)
  {
#pragma omp barrier
#pragma omp master
    t0 = omp_get_wtime();
    sum += fma_block(iters, 0.1f + 0.001f * (float)omp_get_thread_num());
#pragma omp barrier
#pragma omp master
    t1 = omp_get_wtime();
  }
  *checksum += sum;
  return t1 - t0;
}

static int run_fma(double seconds, int reps) {
  const int threads = omp_get_max_threads();
  double checksum = 0.0;
  /* Calibrate: double the iteration count until a sample takes >= 20 ms, then scale. */
  long iters = 1L << 16;
  double t = fma_sample(iters, &checksum);
  while (t < 0.02 && iters < (1L << 40)) {
    iters *= 2;
    t = fma_sample(iters, &checksum);
  }
  iters = (long)((double)iters * seconds / t);
  if (iters < 1) iters = 1;
  fma_sample(iters, &checksum); /* warm-up at the final length */
  double* s = malloc(sizeof(double) * (size_t)reps);
  double run_sum = 0.0;
  for (int r = 0; r < reps; ++r) s[r] = fma_sample(iters, &run_sum);
  checksum += run_sum;
  /* Each chain converges to (1 - sqrt 3)/2 = -0.366: a finite, non-zero sum proves the work ran. */
  const double per_thread = (double)NACC * LANES * -0.3660254;
  if (!isfinite(run_sum) || fabs(run_sum / ((double)reps * threads) - per_thread) > 1e-2 * fabs(per_thread)) {
    fprintf(stderr, "cpu_reference: fma checksum %g is off (expected about %g)\n", run_sum,
            per_thread * reps * threads);
    return 1;
  }
  const double flops = 2.0 * LANES * NACC * (double)iters * threads;
  printf("{\"kernel\":\"fma\",\"threads\":%d,\"isa\":\"%s\",\"vector_bits\":%d,\"accumulators\":%d,\"iters\":%ld,"
         "\"flops_per_sample\":%.17g,\"checksum\":%.9g,",
         threads, ISA, VEC_BITS, NACC, iters, flops, checksum);
  print_samples(s, reps);
  printf(",\"gflops_median\":%.6g,\"gflops_best\":%.6g}\n", flops / median(s, reps) / 1e9,
         flops / minimum(s, reps) / 1e9);
  free(s);
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 4 && strcmp(argv[1], "triad") == 0) {
    long n = atol(argv[2]);
    int reps = atoi(argv[3]);
    if (n < 1 || reps < 1) goto usage;
    return run_triad(n, reps);
  }
  if (argc == 4 && strcmp(argv[1], "fma") == 0) {
    double sec = atof(argv[2]);
    int reps = atoi(argv[3]);
    if (!(sec > 0) || reps < 1) goto usage;
    return run_fma(sec, reps);
  }
usage:
  fprintf(stderr, "usage: %s triad N_ELEMS REPS | fma SECONDS_PER_SAMPLE REPS\n", argv[0]);
  return 2;
}
