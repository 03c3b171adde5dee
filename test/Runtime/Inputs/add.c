/* add.c - test program for loom-run: y = x + w + s[0], k2 = 2 * k.
 * Buffers: inputs x (f32), weights w (f32), s (f32 [1]), k (i64), outputs
 * y (f32), k2 (i64); all of NUMEL local elements except s. */
#include <stdint.h>

void loom_entry(void **b) {
  const float *x = b[0], *w = b[1], *s = b[2];
  const int64_t *k = b[3];
  float *y = b[4];
  int64_t *k2 = b[5];
  for (int i = 0; i < NUMEL; ++i) {
    y[i] = x[i] + w[i] + s[0];
    k2[i] = 2 * k[i];
  }
}
