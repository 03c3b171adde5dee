/* collectives.c - test program that calls every loomrt collective.
 * Compiled with -DNAX=<grid axes 0..2> -DP=<ranks> -DK=<row length> -DG0=..
 * Input 0: x, this rank's K floats. Outputs, in order (see rt.py coll-*):
 *  ag_all  f32 [P*K]  all_gather over all axes
 *  ag_rev  f32 [P*K]  all_gather over axes (1, 0) (all axes if NAX < 2)
 *  ag_0    f32 [G0*K] all_gather over axis 0 (no axes if NAX == 0)
 *  a2a     f32 [K]    all_to_all over all axes, K/P per peer
 *  rs      f32 [K/P]  reduce_scatter sum over all axes
 *  rs_min  i32 [K/P]  reduce_scatter min over all axes of int(x) - 10 * p
 *  ar_max  f32 [K]    all_reduce max over all axes
 *  ar_prod i64 [K]    all_reduce prod over all axes of int(x) % 3 + 1
 *  ar_f16  f16 [K]    all_reduce sum over all axes of x / 2 as float16
 *  ar_bf16 bf16 [K]   all_reduce min over all axes of -x as bfloat16
 *  ar_bool bool [K]   all_reduce sum (or) over all axes of (x % 5 == 0)
 *  ring    f32 [K]    x of world rank (r - 1) mod P via send/recv */
#include "loomrt.h"
#include <stdint.h>
#include <string.h>

#if NAX == 2
#define ALL_N 2
#define ALL_AXES (0 | (1 << 8))
#define REV_AXES (1 | (0 << 8))
#elif NAX == 1
#define ALL_N 1
#define ALL_AXES 0
#define REV_AXES 0
#else
#define ALL_N 0
#define ALL_AXES 0
#define REV_AXES 0
#endif
#define B (K / P)

static uint16_t toHalf(float f) { /* exact for the small halves used here */
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) == 0)
    return (uint16_t)(x >> 16);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t e = (int32_t)((x >> 23) & 0xff) - 127 + 15;
  return (uint16_t)(sign | (e << 10) | ((x >> 13) & 0x3ff));
}

static uint16_t toBf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  return (uint16_t)(x >> 16);
}

void loom_entry(void **b) {
  const float *x = b[0];
  int i = 1;
  float *ag_all = b[i++], *ag_rev = b[i++], *ag_0 = b[i++], *a2a = b[i++],
        *rs = b[i++];
  int32_t *rs_min = b[i++];
  float *ar_max = b[i++];
  int64_t *ar_prod = b[i++];
  uint16_t *ar_f16 = b[i++], *ar_bf16 = b[i++];
  uint8_t *ar_bool = b[i++];
  float *ring = b[i++];

  loomrt_all_gather(x, ag_all, K * 4, ALL_N, ALL_AXES);
  loomrt_all_gather(x, ag_rev, K * 4, ALL_N, REV_AXES);
  loomrt_all_gather(x, ag_0, K * 4, NAX > 0 ? 1 : 0, 0);
  loomrt_all_to_all(x, a2a, B * 4, ALL_N, ALL_AXES);
  loomrt_reduce_scatter(x, rs, B, LOOMRT_FLOAT32, LOOMRT_SUM, ALL_N, ALL_AXES);
  int32_t ints[K];
  for (int j = 0; j < K; ++j)
    ints[j] = (int32_t)x[j] - 10 * (j / B);
  loomrt_reduce_scatter(ints, rs_min, B, LOOMRT_INT32, LOOMRT_MIN, ALL_N,
                        ALL_AXES);
  memcpy(ar_max, x, K * 4);
  loomrt_all_reduce(ar_max, K, LOOMRT_FLOAT32, LOOMRT_MAX, ALL_N, ALL_AXES);
  for (int j = 0; j < K; ++j) {
    ar_prod[j] = (int64_t)x[j] % 3 + 1;
    ar_f16[j] = toHalf(x[j] / 2);
    ar_bf16[j] = toBf16(-x[j]);
    ar_bool[j] = ((int)x[j] % 5) == 0;
  }
  loomrt_all_reduce(ar_prod, K, LOOMRT_INT64, LOOMRT_PROD, ALL_N, ALL_AXES);
  loomrt_all_reduce(ar_f16, K, LOOMRT_FLOAT16, LOOMRT_SUM, ALL_N, ALL_AXES);
  loomrt_all_reduce(ar_bf16, K, LOOMRT_BFLOAT16, LOOMRT_MIN, ALL_N, ALL_AXES);
  loomrt_all_reduce(ar_bool, K, LOOMRT_BOOL, LOOMRT_SUM, ALL_N, ALL_AXES);

  int r = loomrt_world_rank();
  int next = (r + 1) % P, prev = (r + P - 1) % P;
  if (r % 2 == 0) {
    loomrt_send(x, K * 4, next, 7);
    loomrt_recv(ring, K * 4, prev, 7);
  } else {
    loomrt_recv(ring, K * 4, prev, 7);
    loomrt_send(x, K * 4, next, 7);
  }
}
